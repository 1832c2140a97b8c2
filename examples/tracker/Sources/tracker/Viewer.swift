import AmbarModels
import Foundation
import SharedStoreIPC

/// The viewer: a results controller over the open tasks, by priority then title, on the main
/// context, which sharing keeps in step with the writer. It prints each change; once a project
/// was deleted it prints `final` and its list, one task per line, and exits.
@MainActor
enum Viewer {
    static func run(directory: URL) async throws {
        let stack = try Tracker.open(directory)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
        let main = try stack.mainContext
        let controller = FetchedResultsController(fetchRequest: try Tracker.openTasks(), context: main)
        controller.onChange = { changes in
            for change in changes {
                switch change {
                case .insert(_, let at): say("insert\t\(at.row)\t\(controller.fetchedObjects[at.row].title)")
                case .delete(_, let at): say("delete\t\(at.row)")
                case .move(_, let from, let to): say("move\t\(from.row) -> \(to.row)\t\(controller.fetchedObjects[to.row].title)")
                case .update(_, let at): say("update\t\(at.row)\t\(controller.fetchedObjects[at.row].title)")
                case .insertSection, .deleteSection: break
                }
            }
        }
        try controller.performFetch()
        say("ready: \(controller.fetchedObjects.count) open tasks")

        // Done once a project was deleted: merged live, or already in the ledger at start.
        let finished = AsyncStream<Void>.makeStream()
        let merges = sync.observeRemoteMerges { event in
            if event.deleted.contains(where: { $0.entityName == Tracker.Project.entityName }) { finished.continuation.yield() }
        }
        if try stack.writerCoordinator.history(after: 0).contains(where: { $0.deleted.contains { $0.entityName == Tracker.Project.entityName } }) {
            finished.continuation.yield()
        }
        for await _ in finished.stream { break }
        merges.cancel()

        say("final")
        for task in controller.fetchedObjects { say(Tracker.line(task)) }
        await sync.stop()
    }
}
