/// Why an import cannot start.
public enum ImportSetupError: Error, CustomStringConvertible, Sendable {
    /// The model has no entity of that name.
    case unknownEntity(String, known: [String])
    /// The entity has no attribute of that name to upsert by.
    case unknownKey(String, entity: String, known: [String])

    /// The reason, with the names that would have been valid.
    public var description: String {
        switch self {
        case .unknownEntity(let name, let known):
            "The store has no entity \"\(name)\" (it has: \(known.joined(separator: ", ")))."
        case .unknownKey(let key, let entity, let known):
            "\(entity) has no attribute \"\(key)\" to use as --key (it has: \(known.joined(separator: ", ")))."
        }
    }
}
