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
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if var items = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !items.isAtEnd { elements.append(try items.decode(FlatElement.self).value) }
            self = .array(elements)
        } else {
            _ = try decoder.container(keyedBy: AnyKey.self)
            self = .object
        }
    }

    /// An array's element: a scalar, or a nested array or object recognised without descending.
    private struct FlatElement: Decodable {
        let value: JSONValue

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                value = .null
            } else if let v = try? container.decode(Bool.self) {
                value = .bool(v)
            } else if let v = try? container.decode(Int64.self) {
                value = .integer(v)
            } else if let v = try? container.decode(Double.self) {
                value = .double(v)
            } else if let v = try? container.decode(String.self) {
                value = .string(v)
            } else if (try? decoder.unkeyedContainer()) != nil {
                value = .array([])
            } else {
                _ = try decoder.container(keyedBy: AnyKey.self)
                value = .object
            }
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
