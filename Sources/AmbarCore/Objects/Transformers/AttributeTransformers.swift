import Foundation
import Logging

/// The registry of named ``AttributeTransformer``s, shared by the process: a transformable
/// attribute uses the one registered under its ``AttributeDescription/valueTransformerName``.
///
/// An attribute whose transformer is not registered (Core Data's `NSSecureUnarchiveFromData`,
/// say, whose archives are Objective-C objects) reads and writes its raw bytes as `Data`; the
/// first such access logs a notice naming the transformer, once per name.
public enum AttributeTransformers {
    private struct Erased: Sendable {
        let toData: @Sendable (Any) throws -> Data
        let fromData: @Sendable (Data) throws -> Any
        let valueType: Any.Type
    }

    private static let registry = Locked<[String: Erased]>([:])
    private static let noted = Locked<Set<String>>([])
    private static let logger = Logger(label: "ambar.stack.transformers")

    /// Registers `transformer` under `name`, replacing any transformer registered under it.
    public static func register<T: AttributeTransformer>(_ transformer: T, named name: String) {
        let erased = Erased(
            toData: { value in
                guard let typed = value as? T.Value else {
                    throw TransformerTypeError(expected: T.Value.self, got: type(of: value))
                }
                return try transformer.data(from: typed)
            },
            fromData: { try transformer.value(from: $0) },
            valueType: T.Value.self)
        registry.withLock { $0[name] = erased }
    }

    /// Removes the transformer registered under `name`.
    public static func unregister(named name: String) {
        _ = registry.withLock { $0.removeValue(forKey: name) }
    }

    /// Whether a transformer is registered under `name`.
    public static func isRegistered(_ name: String) -> Bool {
        registry.withLock { $0[name] != nil }
    }

    struct TransformerTypeError: Error, CustomStringConvertible {
        let expected: Any.Type
        let got: Any.Type
        var description: String { "the transformer takes \(expected), not \(got)" }
    }

    /// The value for `data` of `attribute`, as `T`.
    static func decode<T>(_ data: Data, _ attribute: AttributeDescription, entity: String, as type: T.Type) throws(AmbarError) -> T {
        let name = attribute.valueTransformerName ?? "none"
        guard let transformer = transformer(for: attribute, entity: entity) else {
            if let raw = data as? T { return raw }
            throw .transformationFailed(
                entity: entity, property: attribute.name, transformer: name,
                reason:
                    "no transformer is registered under that name, so the value reads as Data, not \(T.self); register one with AttributeTransformers.register(_:named:)"
            )
        }
        do {
            let value = try transformer.fromData(data)
            guard let typed = value as? T else {
                throw TransformerTypeError(expected: T.self, got: Swift.type(of: value))
            }
            return typed
        } catch let error as TransformerTypeError {
            throw .transformationFailed(
                entity: entity, property: attribute.name, transformer: name, reason: "the transformer gives \(transformer.valueType), not \(error.expected)")
        } catch {
            throw .transformationFailed(entity: entity, property: attribute.name, transformer: name, reason: "\(error)", cause: ErrorCause(error))
        }
    }

    /// The bytes to store for `value` of `attribute`.
    static func encode(_ value: Any, _ attribute: AttributeDescription, entity: String) throws(AmbarError) -> Data {
        let name = attribute.valueTransformerName ?? "none"
        guard let transformer = transformer(for: attribute, entity: entity) else {
            if let raw = value as? Data { return raw }
            throw .transformationFailed(
                entity: entity, property: attribute.name, transformer: name,
                reason: "no transformer is registered under that name, so only Data can be written; register one with AttributeTransformers.register(_:named:)")
        }
        do {
            return try transformer.toData(value)
        } catch {
            throw .transformationFailed(entity: entity, property: attribute.name, transformer: name, reason: "\(error)", cause: ErrorCause(error))
        }
    }

    private static func transformer(for attribute: AttributeDescription, entity: String) -> Erased? {
        let name = attribute.valueTransformerName
        if let name, let found = registry.withLock({ $0[name] }) { return found }
        let key = name ?? "\(entity).\(attribute.name)"
        if noted.withLock({ $0.insert(key).inserted }) {
            logger.notice(
                "transformable attribute \(entity).\(attribute.name): no transformer registered under \(name.map { "'\($0)'" } ?? "its (empty) transformer name"); its value reads and writes as raw Data"
            )
        }
        return nil
    }
}
