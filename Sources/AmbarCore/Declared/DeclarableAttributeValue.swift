import Foundation

/// A Swift type that a declared model (``DeclaredModel``, usually written with the `@Model`
/// macro of `AmbarModels`) stores as an attribute of its own type: the attribute's
/// ``AttributeType`` and optionality come from the property's Swift type.
///
/// `String`, `Bool`, `Int`, `Int16`, `Int32`, `Int64`, `Double`, `Float`, `Date`, `Data`,
/// `UUID`, `URL` and `Decimal` conform, and so does `Optional` of each. Any other `Codable` type
/// is stored as a transformable attribute, encoded as JSON.
public protocol DeclarableAttributeValue: AttributeValueConvertible, Codable {
    /// The attribute type that stores the value.
    static var attributeType: AttributeType { get }
    /// Whether the type admits `nil` (only `Optional` does).
    static var isOptionalValue: Bool { get }
}

extension DeclarableAttributeValue {
    /// Not optional.
    public static var isOptionalValue: Bool { false }
}

extension String: DeclarableAttributeValue { public static var attributeType: AttributeType { .string } }
extension Bool: DeclarableAttributeValue { public static var attributeType: AttributeType { .boolean } }
extension Int: DeclarableAttributeValue { public static var attributeType: AttributeType { .integer64 } }
extension Int16: DeclarableAttributeValue { public static var attributeType: AttributeType { .integer16 } }
extension Int32: DeclarableAttributeValue { public static var attributeType: AttributeType { .integer32 } }
extension Int64: DeclarableAttributeValue { public static var attributeType: AttributeType { .integer64 } }
extension Double: DeclarableAttributeValue { public static var attributeType: AttributeType { .double } }
extension Float: DeclarableAttributeValue { public static var attributeType: AttributeType { .float } }
extension Date: DeclarableAttributeValue { public static var attributeType: AttributeType { .date } }
extension Data: DeclarableAttributeValue { public static var attributeType: AttributeType { .binary } }
extension UUID: DeclarableAttributeValue { public static var attributeType: AttributeType { .uuid } }
extension URL: DeclarableAttributeValue { public static var attributeType: AttributeType { .uri } }
extension Decimal: DeclarableAttributeValue { public static var attributeType: AttributeType { .decimal } }

extension Optional: DeclarableAttributeValue where Wrapped: DeclarableAttributeValue {
    /// The wrapped type's attribute type.
    public static var attributeType: AttributeType { Wrapped.attributeType }
    /// Optional.
    public static var isOptionalValue: Bool { true }
}
