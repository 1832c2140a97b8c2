/// Why an import cannot start.
public enum ImportSetupError: Error, CustomStringConvertible, Sendable {
    /// The model has no entity of that name.
    case unknownEntity(String, known: [String])
    /// The entity has no attribute of that name to upsert by.
    case unknownKey(String, entity: String, known: [String])
    /// `--relate` names a relationship the entity does not have.
    case unknownRelationship(String, entity: String, known: [String])
    /// `--relate` names a key attribute the relationship's destination does not have.
    case unknownRelatedKey(String, relationship: String, destination: String, known: [String])
    /// `--relate` is not of the form RELATIONSHIP=KEY.
    case badRelate(String)

    /// The reason, with the names that would have been valid.
    public var description: String {
        switch self {
        case .unknownEntity(let name, let known):
            "The store has no entity \"\(name)\" (it has: \(known.joined(separator: ", ")))."
        case .unknownKey(let key, let entity, let known):
            "\(entity) has no attribute \"\(key)\" to use as --key (it has: \(known.joined(separator: ", ")))."
        case .unknownRelationship(let name, let entity, let known):
            "\(entity) has no relationship \"\(name)\" for --relate (it has: \(known.joined(separator: ", ")))."
        case .unknownRelatedKey(let key, let relationship, let destination, let known):
            "--relate \(relationship)=\(key): \(destination) has no attribute \"\(key)\" (it has: \(known.joined(separator: ", ")))."
        case .badRelate(let text):
            "--relate \"\(text)\" is not of the form RELATIONSHIP=KEY (e.g. author=uid)."
        }
    }
}
