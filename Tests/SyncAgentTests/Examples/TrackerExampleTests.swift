import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `examples/tracker`, a package of its own, built and run as a user would: a viewer process
/// keeps its results controller while a writer process imports, updates and deletes; the
/// viewer's final list is the store's.
final class TrackerExampleTests: AgentTestCase {
    private var repository: URL {
        Repository.root
    }

    /// Builds the example (debug, in `.build-tracker` of this repository) and returns its binary.
    private func buildTracker() throws -> URL {
        let scratch = repository.appendingPathComponent(".build-tracker")
        let build = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "build", "--package-path", repository.appendingPathComponent("examples/tracker").path, "--scratch-path", scratch.path],
            timeout: 1_800)
        XCTAssertEqual(build.status, 0, "building examples/tracker failed:\n\(build.output.suffix(4_000))\n\(build.error.suffix(4_000))")
        return scratch.appendingPathComponent("debug/tracker")
    }

    func testTheViewersFinalListIsTheStores() throws {
        let tracker = try buildTracker()
        let viewerLog = directory.url.appendingPathComponent("viewer.log")
        let viewer = try SpawnedProcess(tracker.path, ["viewer", directory.url.path], log: viewerLog)
        func viewerLines() -> [String] {
            ((try? String(contentsOf: viewerLog, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        // The viewer kills on deinit; the writer starts once the viewer listed the empty store.
        XCTAssertTrue(eventually(timeout: 60) { viewerLines().contains { $0.hasPrefix("ready") } || !viewer.isRunning })
        XCTAssertTrue(viewerLines().contains { $0.hasPrefix("ready: 0 open tasks") }, viewerLines().joined(separator: "\n"))

        let writer = try ProcessRunner.run(tracker, ["writer", directory.url.path], timeout: 120)
        XCTAssertEqual(writer.status, 0, writer.error)
        XCTAssertTrue(writer.output.contains("deleted the project Garden"), writer.output)

        let status = viewer.waitForExit(timeout: 120)
        XCTAssertEqual(status.flatMap(SpawnedProcess.exitCode), 0, "the viewer exits after the deletion:\n\(viewerLines().joined(separator: "\n"))")
        let lines = viewerLines()
        let final = try XCTUnwrap(lines.firstIndex(of: "final"), lines.joined(separator: "\n"))
        let shown = lines[(final + 1)...].filter { !$0.isEmpty }
        XCTAssertTrue(lines[..<final].contains { $0.hasPrefix("insert\t") }, "the viewer printed the changes as they merged")

        // The store, read without the example's code: open tasks by priority, then title.
        let stack = try DataStack.open(model: .model(try PersistentStoreCoordinator.storedModel(at: store)), storeURL: store, name: "check")
        let context = try stack.importerContext()
        let stored: [String] = try context.performAndWait { () throws in
            try context.fetch(
                FetchRequest<ManagedObject>(
                    entityName: "Task", predicate: Key<Bool>("done") == false,
                    sortDescriptors: [Key<Int64>("priority").sorted(), Key<String>("title").sorted()]
                )
            ).map { task in
                let priority = try task.value(forKey: "priority")
                let title = try task.value(forKey: "title")
                let project = try task.object(forKey: "project")?.value(forKey: "name")
                guard case .integer(let p) = priority, case .string(let t) = title, case .string(let name)? = project else { return "?" }
                return "\(p)\t\(t)\t\(name)"
            }
        }
        XCTAssertEqual(Array(shown), stored)
        XCTAssertEqual(try context.performAndWait { () throws in try context.count(for: FetchRequest<ManagedObject>(entityName: "Project")) }, 2)
        XCTAssertFalse(stored.isEmpty)
        XCTAssertFalse(stored.contains { $0.hasSuffix("\tGarden") }, "the deleted project's tasks went with it")
    }
}
