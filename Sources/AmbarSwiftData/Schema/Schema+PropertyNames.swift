import Foundation

extension Schema {
    /// The persisted property names of each model class by key path, built once per class.
    final class PropertyNames: @unchecked Sendable {  // the lock guards the dictionary
        static let shared = PropertyNames()
        private let lock = NSLock()
        private var byClass: [ObjectIdentifier: [AnyKeyPath: String]] = [:]

        func names(for type: any PersistentModel.Type) -> [AnyKeyPath: String] {
            if let known = lock.withLock({ byClass[ObjectIdentifier(type)] }) { return known }
            var names: [AnyKeyPath: String] = [:]
            for property in type.schemaMetadata { names[property.keypath] = property.name }
            lock.withLock { byClass[ObjectIdentifier(type)] = names }
            return names
        }
    }
}
