import Foundation

/// What is wrong with a model, and where: the entity and property (when there is one), so that a
/// model file reader can point at the element's line.
struct ModelIssue: Error, Sendable {
    let entity: String?
    let property: String?
    let message: String
}
