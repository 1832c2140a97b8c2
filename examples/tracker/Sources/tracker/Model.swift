import AmbarModels
import Foundation

/// The tracker's model, declared once in its classes. The entities are `Project` and `Task`
/// (the classes are nested in `Tracker`, so that `Task` does not hide Swift's).
enum Tracker {
    @Model final class Project: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(deleteRule: .cascade, inverse: \Tracker.Task.project) var tasks: Set<Task>

        init(name: String) {
            super.init()
            self.name = name
        }
    }

    @Model final class Task: ManagedObject {
        var title: String
        var done: Bool = false
        var priority: Int = 0
        var due: Date?
        var project: Project?
        @Relationship(deleteRule: .cascade, inverse: \Tracker.Notice.task) var notices: Set<Notice>

        init(title: String, priority: Int, project: Project) {
            super.init()
            self.title = title
            self.priority = priority
            self.project = project
        }
    }

    /// What the notifier makes, exactly once, for each task marked done: the task's title, the
    /// ledger transaction that marked it, and the task itself (its notices go when it goes).
    @Model final class Notice: ManagedObject {
        var taskTitle: String
        var token: Int = 0
        var task: Task?

        init(for task: Task, token: Int64) {
            super.init()
            self.taskTitle = task.title
            self.token = Int(token)
            self.task = task
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(declaring: [Project.self, Task.self, Notice.self])
    }

    /// The store in `directory`, where `sync-agent --directory DIR` finds it.
    static func open(_ directory: URL) throws -> DataStack {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try DataStack.open(model: .model(try model()), storeURL: directory.appendingPathComponent("ambar.sqlite"), name: "tracker")
    }

    /// The open tasks, by priority then title: what the viewer shows.
    static func openTasks() throws -> FetchRequest<Task> {
        try FetchRequest<Task>(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)])
    }

    /// One line of the viewer's list: `priority<TAB>title<TAB>project name`.
    static func line(_ task: Task) -> String {
        "\(task.priority)\t\(task.title)\t\(task.project?.name ?? "")"
    }
}
