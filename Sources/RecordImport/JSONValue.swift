import Foundation

/// One JSON value, decoded strictly: a boolean never reads as a number, nor a number as a string.
public enum JSONValue: Decodable, Equatable, Sendable {
    /// JSON null.
    case null
    /// true or false.
    case bool(Bool)
    /// A number without a fraction that fits 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array, with its elements one level deep (the destinations a relationship field names):
    /// an array or object inside it is kept as an empty `.array` or `.object`, not descended into.
    case array([JSONValue])
    /// An object. Its members are not decoded: no attribute holds one.
    case object

    /// Decodes any JSON value, keeping its kind. Arrays and objects are only recognised, never
    /// descended into: a line nested thousands deep costs one scan, not a decode per level (each
    /// failed attempt at a level would build a coding path as long as the depth).
    public init(from decoder: any Decoder) throws {
        self = try Self.decode(decoder, elements: true)
    }

    /// The value `decoder` holds. Its kind is found by trying each kind in turn: a `Decoder` has
    /// no other way to say what it holds, so a failed attempt answers "not this kind" and is not
    /// an error to report. With `elements`, an array's elements are read, one level deep.
    private static func decode(_ decoder: any Decoder, elements: Bool) throws -> JSONValue {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { return .null }
        // try?: probing the value's kind; the last kind, an object, throws
        if let value = try? container.decode(Bool.self) { return .bool(value) }
        // try?: as above
        if let value = try? container.decode(Int64.self) { return .integer(value) }
        // try?: as above
        if let value = try? container.decode(Double.self) { return .double(value) }
        // try?: as above
        if let value = try? container.decode(String.self) { return .string(value) }
        // try?: as above
        if var items = try? decoder.unkeyedContainer() {
            guard elements else { return .array([]) }
            var values: [JSONValue] = []
            while !items.isAtEnd { values.append(try items.decode(Element.self).value) }
            return .array(values)
        }
        _ = try decoder.container(keyedBy: AnyKey.self)
        return .object
    }

    /// An array's element: a scalar, or a nested array or object recognised without descending.
    private struct Element: Decodable {
        let value: JSONValue

        init(from decoder: any Decoder) throws {
            value = try JSONValue.decode(decoder, elements: false)
        }
    }

    /// Any member name, for recognising an object.
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// How the value reads in an error message.
    public var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value.count > 40 ? value.prefix(40) + "…" : value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
