import Foundation

/// Turns the bytes of a ``AttributeType/transformable`` attribute into a Swift value and back:
/// Ambar's counterpart of Core Data's `ValueTransformer`. Register one under the attribute's
/// `valueTransformerName` with ``AttributeTransformers/register(_:named:)``.
///
/// ```swift
/// AttributeTransformers.register(JSONAttributeTransformer<[String]>(), named: "TagsTransformer")
/// let tags = try note.transformedValue(forKey: "tags", as: [String].self)
/// try note.setTransformedValue(["swift", "linux"], forKey: "tags")
/// ```
public protocol AttributeTransformer: Sendable {
    /// The Swift type the bytes stand for.
    associatedtype Value
    /// The bytes to store for `value`.
    func data(from value: Value) throws -> Data
    /// The value stored as `data`.
    func value(from data: Data) throws -> Value
}

/// Stores a `Codable` value as JSON: the transformer to register for attributes whose values
/// Swift code defines.
public struct JSONAttributeTransformer<Value: Codable & Sendable>: AttributeTransformer {
    /// Creates the transformer.
    public init() {}

    /// The value as JSON (keys sorted, so equal values store equal bytes).
    public func data(from value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }

    /// The value the JSON stands for.
    public func value(from data: Data) throws -> Value { try JSONDecoder().decode(Value.self, from: data) }
}

/// Hands the stored bytes over unchanged: what an attribute whose transformer is not registered
/// uses.
public struct DataPassThroughTransformer: AttributeTransformer {
    /// Creates the transformer.
    public init() {}
    /// The bytes themselves.
    public func data(from value: Data) throws -> Data { value }
    /// The stored bytes themselves.
    public func value(from data: Data) throws -> Data { data }
}
