import Foundation

/// What is wrong with a model, and where: the entity and property (when there is one), so that a
/// model file reader can point at the element's line.
package struct ModelIssue: Error, Sendable {
    package let entity: String?
    package let property: String?
    package let message: String
}
