import AmbarModels
import Foundation

/// The task tracker's model, declared in its classes: no entity description, no property names
/// written twice. Nested so that the entity can be called `Task`.
enum Tracker {
    @Model final class Project: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(deleteRule: .cascade, inverse: \Tracker.Task.project) var tasks: Set<Task>
        var createdAt: Date?

        /// Made outside a context, then inserted (as in SwiftData).
        init(name: String) {
            super.init()
            self.name = name
        }
    }

    @Model final class Task: ManagedObject {
        var title: String
        var done: Bool = false
        var due: Date?
        var priority: Int = 0
        var tags: [String] = []
        var project: Project?
        @Attribute(.transient) var draft: String?
        @Attribute(.indexed, originalName: "code") var reference: String?
        @Transient var scratch = 0

        /// Made outside a context, then inserted (as in SwiftData).
        init(title: String, priority: Int = 0, project: Project? = nil) {
            super.init()
            self.title = title
            self.priority = priority
            self.project = project
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(declaring: [Project.self])
    }
}
