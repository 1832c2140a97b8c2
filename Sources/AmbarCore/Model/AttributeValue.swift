import Foundation

/// A value of an attribute, as a context holds it in memory.
///
/// `AttributeValue` is `Sendable`, so values can cross queues freely while the managed objects
/// that hold them stay on their context's queue.
public enum AttributeValue: Sendable, Hashable, Codable {
    /// No value (SQL NULL).
    case null
    /// Text.
    case string(String)
    /// Any integer attribute (16, 32 or 64 bits) and Booleans in SQL.
    case integer(Int64)
    /// A `double` or `float` attribute.
    case double(Double)
    /// A Boolean attribute.
    case bool(Bool)
    /// A date attribute.
    case date(Date)
    /// A binary attribute.
    case data(Data)
    /// A UUID attribute.
    case uuid(UUID)
    /// A URL attribute.
    case url(URL)
    /// A decimal attribute.
    case decimal(Decimal)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether this value may be stored in an attribute of `type` (``null`` always may; optionality
    /// is checked at save).
    public func isCompatible(with type: AttributeType) -> Bool {
        switch (self, type) {
        case (.null, _), (_, .undefined): return true
        case (.string, .string): return true
        case (.integer(let v), .integer16): return v >= Int64(Int16.min) && v <= Int64(Int16.max)
        case (.integer(let v), .integer32): return v >= Int64(Int32.min) && v <= Int64(Int32.max)
        case (.integer, .integer64): return true
        case (.double, .double), (.double, .float): return true
        case (.bool, .boolean): return true
        case (.date, .date): return true
        case (.data, .binary), (.data, .transformable): return true
        case (.uuid, .uuid): return true
        case (.url, .uri): return true
        case (.decimal, .decimal): return true
        default: return false
        }
    }

    /// Converts `self` to the canonical in-memory form for `type`, accepting the usual widenings
    /// (an integer for a double, a Bool given as 0/1, …). Returns `nil` when no lossless conversion
    /// exists.
    package func coerced(to type: AttributeType) -> AttributeValue? {
        if isCompatible(with: type) {
            if type == .float, case .double(let d) = self { return .double(Double(Float(d))) }
            return self
        }
        switch (self, type) {
        case (.integer(let v), .double), (.integer(let v), .float): return .double(Double(v))
        case (.integer(let v), .boolean) where v == 0 || v == 1: return .bool(v == 1)
        case (.bool(let b), .integer16), (.bool(let b), .integer32), (.bool(let b), .integer64):
            return .integer(b ? 1 : 0)
        case (.double(let d), _) where type.isInteger && d.rounded() == d && abs(d) < 9.2e18:
            return AttributeValue.integer(Int64(d)).isCompatible(with: type) ? .integer(Int64(d)) : nil
        case (.integer(let v), .decimal): return .decimal(Decimal(v))
        case (.double(let d), .decimal) where d.isFinite:
            return Decimal(string: String(d), locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        default: return nil
        }
    }

    /// A short type name for error messages.
    package var kindName: String {
        switch self {
        case .null: return "nil"
        case .string: return "string"
        case .integer: return "integer"
        case .double: return "double"
        case .bool: return "bool"
        case .date: return "date"
        case .data: return "data"
        case .uuid: return "uuid"
        case .url: return "url"
        case .decimal: return "decimal"
        }
    }
}

extension AttributeValue: CustomStringConvertible {
    /// A readable rendering of the value, used in error messages and logs.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .string(let s): return "\"\(s)\""
        case .integer(let v): return String(v)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .date(let d): return ISO8601DateFormatter().string(from: d)
        case .data(let d): return "<\(d.count) bytes>"
        case .uuid(let u): return u.uuidString
        case .url(let u): return u.absoluteString
        case .decimal(let d): return d.description
        }
    }
}

/// A Swift type that can be stored in an attribute: the bridge between typed properties
/// (`@Managed var name: String`) and ``AttributeValue``.
public protocol AttributeValueConvertible: Sendable {
    /// The attribute value for `self`.
    var attributeValue: AttributeValue { get }
    /// Creates a value from an attribute value, or returns `nil` when it does not fit.
    init?(attributeValue: AttributeValue)
    /// The value a typed property reads when the stored value is missing or does not fit
    /// (`""`, `0`, `false`, … and `nil` for optionals).
    static var placeholder: Self { get }
}

extension String: AttributeValueConvertible {
    public static var placeholder: String { "" }
    public var attributeValue: AttributeValue { .string(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .string(let s) = attributeValue else { return nil }
        self = s
    }
}

extension Int: AttributeValueConvertible {
    public static var placeholder: Int { 0 }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue else { return nil }
        self = Int(v)
    }
}

extension Int16: AttributeValueConvertible {
    public static var placeholder: Int16 { 0 }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let x = Int16(exactly: v) else { return nil }
        self = x
    }
}

extension Int32: AttributeValueConvertible {
    public static var placeholder: Int32 { 0 }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let x = Int32(exactly: v) else { return nil }
        self = x
    }
}

extension Int64: AttributeValueConvertible {
    public static var placeholder: Int64 { 0 }
    public var attributeValue: AttributeValue { .integer(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue else { return nil }
        self = v
    }
}

extension Double: AttributeValueConvertible {
    public static var placeholder: Double { 0 }
    public var attributeValue: AttributeValue { .double(self) }
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .double(let d): self = d
        case .integer(let v): self = Double(v)
        default: return nil
        }
    }
}

extension Float: AttributeValueConvertible {
    public static var placeholder: Float { 0 }
    public var attributeValue: AttributeValue { .double(Double(self)) }
    public init?(attributeValue: AttributeValue) {
        guard let d = Double(attributeValue: attributeValue) else { return nil }
        self = Float(d)
    }
}

extension Bool: AttributeValueConvertible {
    public static var placeholder: Bool { false }
    public var attributeValue: AttributeValue { .bool(self) }
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .bool(let b): self = b
        case .integer(let v): self = v != 0
        default: return nil
        }
    }
}

extension Date: AttributeValueConvertible {
    public static var placeholder: Date { Date(timeIntervalSince1970: 0) }
    public var attributeValue: AttributeValue { .date(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .date(let d) = attributeValue else { return nil }
        self = d
    }
}

extension Data: AttributeValueConvertible {
    public static var placeholder: Data { Data() }
    public var attributeValue: AttributeValue { .data(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .data(let d) = attributeValue else { return nil }
        self = d
    }
}

extension UUID: AttributeValueConvertible {
    public static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    public var attributeValue: AttributeValue { .uuid(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let u) = attributeValue else { return nil }
        self = u
    }
}

extension URL: AttributeValueConvertible {
    public static var placeholder: URL { URL(fileURLWithPath: "/") }
    public var attributeValue: AttributeValue { .url(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .url(let u) = attributeValue else { return nil }
        self = u
    }
}

extension Decimal: AttributeValueConvertible {
    public static var placeholder: Decimal { 0 }
    public var attributeValue: AttributeValue { .decimal(self) }
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .decimal(let d): self = d
        case .integer(let v): self = Decimal(v)
        default: return nil
        }
    }
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    public static var placeholder: Wrapped? { nil }
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
    public init?(attributeValue: AttributeValue) {
        if attributeValue.isNull {
            self = .none
        } else if let w = Wrapped(attributeValue: attributeValue) {
            self = .some(w)
        } else {
            return nil
        }
    }
}
