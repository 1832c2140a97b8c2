import AmbarModels
import Foundation
import SharedStoreIPC

/// The writer: 3 projects, then `tasks` tasks in saves of ten, `done` of them (the first by
/// title) marked done in saves of ten, then one project deleted (its tasks go with it); each save
/// announced to the other processes. By default 50 tasks and 10 done, as fast as it can; `pace`
/// limits it to that many saves a second, for longer runs.
enum Writer {
    struct Options {
        var tasks = 50
        var done = 10
        var pace: Double?
    }

    static func run(directory: URL, options: Options = Options()) async throws {
        let stack = try Tracker.open(directory)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
        let context = try stack.importerContext()
        let names = ["Home", "Work", "Garden"]
        let verbs = ["Paint", "Plan", "Fix", "Order", "Clean", "Call about", "Check", "Sort", "Measure", "Book"]
        let things = ["the fence", "the budget", "the roof", "seeds", "the gutters"]
        let pause: Duration? = options.pace.map { .milliseconds(Int64(1000 / $0)) }

        try await context.perform { () throws(AmbarError) in
            for name in names { try context.insert(Tracker.Project(name: name)) }
            try context.save()
        }
        for start in stride(from: 0, to: options.tasks, by: 10) {
            if let pause { try await Task.sleep(for: pause) }
            try await context.perform { () throws(AmbarError) in
                let projects = try context.fetch(try FetchRequest<Tracker.Project>(sortBy: [SortDescriptor(\.name)]))
                let byName = Dictionary(uniqueKeysWithValues: projects.map { ($0.name, $0) })
                for i in start..<min(start + 10, options.tasks) {
                    let title = "\(verbs[i % verbs.count]) \(things[(i / verbs.count) % things.count]) #\(i + 1)"
                    guard let project = byName[names[i % names.count]] else { continue }
                    try context.insert(Tracker.Task(title: title, priority: (i * 7) % 5, project: project))
                }
                try context.save()  // one transaction of (up to) ten tasks
                try context.reset()
            }
        }
        say("wrote 3 projects and \(options.tasks) tasks")

        let toMark = try await context.perform { () throws(AmbarError) -> [ManagedObjectID] in
            try context.fetch(try FetchRequest<Tracker.Task>(sortBy: [SortDescriptor(\.title)])).prefix(options.done).map(\.objectID)
        }
        for start in stride(from: 0, to: toMark.count, by: 10) {
            if let pause { try await Task.sleep(for: pause) }
            try await context.perform { () throws(AmbarError) in
                for id in toMark[start..<min(start + 10, toMark.count)] {
                    (try context.existingObject(with: id) as? Tracker.Task)?.done = true
                }
                try context.save()
                try context.reset()
            }
        }
        say("marked \(toMark.count) tasks done")

        try await context.perform { () throws(AmbarError) in
            let garden = try context.fetch(try FetchRequest<Tracker.Project>(predicate: #Predicate { $0.name == "Garden" }))
            for project in garden { try context.delete(project) }
            try context.save()
        }
        say("deleted the project Garden and its tasks")
        await sync.stop()
    }
}
