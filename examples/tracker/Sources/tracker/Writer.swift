import AmbarModels
import Foundation
import SharedStoreIPC

/// The writer: 3 projects, 50 tasks, 10 of them marked done, then one project deleted (its
/// tasks go with it), each step its own save, announced to the other processes.
enum Writer {
    static func run(directory: URL) async throws {
        let stack = try Tracker.open(directory)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
        let context = try stack.importerContext()
        let names = ["Home", "Work", "Garden"]
        let verbs = ["Paint", "Plan", "Fix", "Order", "Clean", "Call about", "Check", "Sort", "Measure", "Book"]
        let things = ["the fence", "the budget", "the roof", "seeds", "the gutters"]

        try await context.perform { () throws(AmbarError) in
            let projects = names.map { Tracker.Project(name: $0) }
            for project in projects { try context.insert(project) }
            try context.save()
            for i in 0..<50 {
                let title = "\(verbs[i % verbs.count]) \(things[i / verbs.count]) #\(i + 1)"
                try context.insert(Tracker.Task(title: title, priority: (i * 7) % 5, project: projects[i % projects.count]))
                if i % 10 == 9 { try context.save() }  // five transactions of ten tasks
            }
        }
        say("wrote 3 projects and 50 tasks")

        try await context.perform { () throws(AmbarError) in
            let tasks = try context.fetch(try FetchRequest<Tracker.Task>(sortBy: [SortDescriptor(\.title)]))
            for task in tasks.prefix(10) { task.done = true }
            try context.save()
        }
        say("marked 10 tasks done")

        try await context.perform { () throws(AmbarError) in
            let garden = try context.fetch(try FetchRequest<Tracker.Project>(predicate: #Predicate { $0.name == "Garden" }))
            for project in garden { try context.delete(project) }
            try context.save()
        }
        say("deleted the project Garden and its tasks")
        await sync.stop()
    }
}
