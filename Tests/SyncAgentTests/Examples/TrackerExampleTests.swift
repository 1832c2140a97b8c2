import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `examples/tracker`, a package of its own, run as a user would: a viewer process
/// keeps its results controller while a writer process imports, updates and deletes; the
/// viewer's final list is the store's. The notifier, a durable consumer killed again and again
/// during a long run, makes one notice per task marked done, none twice; under a (test-owned)
/// service manager it speaks Type=notify; its unit and code are the deployment article's.
final class TrackerExampleTests: AgentTestCase {
    private var repository: URL {
        Repository.root
    }

    /// The example's program, as the package builds it (the `tracker` target reads the example's
    /// sources); `testTheExamplesManifestDependsOnWhatThePackageBuildsItWith` checks that the
    /// example's own manifest builds it from the same products.
    private var trackerProgram: URL { BuiltProducts.url("tracker") }

    func testTheViewersFinalListIsTheStores() throws {
        let tracker = trackerProgram
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

    /// The done tasks (title → notices for it) and every notice's title, read without the example's code.
    private func noticesAndDoneTasks() throws -> (done: Set<String>, notices: [String]) {
        let stack = try DataStack.open(model: .model(try PersistentStoreCoordinator.storedModel(at: store)), storeURL: store, name: "check")
        let context = try stack.importerContext()
        return try context.performAndWait { () throws in
            var done = Set<String>()
            for task in try context.fetch(FetchRequest<ManagedObject>(entityName: "Task", predicate: Key<Bool>("done") == true)) {
                if case .string(let title) = try task.value(forKey: "title") { done.insert(title) }
            }
            var notices: [String] = []
            for notice in try context.fetch(FetchRequest<ManagedObject>(entityName: "Notice")) {
                guard case .string(let title) = try notice.value(forKey: "taskTitle"), let task = try notice.object(forKey: "task"),
                    case .string(let taskTitle) = try task.value(forKey: "title"), title == taskTitle
                else {
                    notices.append("a notice without its task: \(notice.objectID)")  // fails the comparison below
                    continue
                }
                notices.append(title)
            }
            return (done, notices)
        }
    }

    private func startNotifier(_ tracker: URL, run: Int, environment: [String: String] = [:]) throws -> (SpawnedProcess, URL) {
        let log = directory.url.appendingPathComponent("notifier-\(run).log")
        let process = try SpawnedProcess(tracker.path, ["notifier", directory.url.path, "--consumer", "notices"], log: log, environment: environment)
        let text = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually(timeout: 60) { text().contains("notifier notices ready") || !process.isRunning }, text())
        XCTAssertTrue(process.isRunning, "notifier run \(run) died at start: \(text())")
        return (process, log)
    }

    func testTheNotifierKilledAgainAndAgainMakesOneNoticePerDoneTask() throws {
        let tracker = trackerProgram
        let writerLog = directory.url.appendingPathComponent("writer.log")
        var (notifier, _) = try startNotifier(tracker, run: 0)
        let writer = try SpawnedProcess(tracker.path, ["writer", directory.url.path, "--tasks", "2000", "--done", "1000", "--pace", "40"], log: writerLog)
        var kills = 0
        var generator = SystemRandomNumberGenerator()
        while writer.isRunning {
            usleep(UInt32.random(in: 300_000...900_000, using: &generator))
            guard writer.isRunning else { break }
            XCTAssertTrue(notifier.isRunning, "the notifier ran until killed")
            kill(notifier.processIdentifier, SIGKILL)
            XCTAssertNotNil(notifier.waitForExit(timeout: 10))
            kills += 1
            (notifier, _) = try startNotifier(tracker, run: kills)
        }
        XCTAssertEqual(writer.waitForExit(timeout: 10).flatMap(SpawnedProcess.exitCode), 0, (try? String(contentsOf: writerLog, encoding: .utf8)) ?? "")
        XCTAssertGreaterThanOrEqual(kills, 5, "killed during the run at least five times")

        // The writer is done: the last notifier catches up to the ledger's head.
        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        let head = try coordinator.currentHistoryToken()
        XCTAssertTrue(try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "notices").map { $0.token >= head } ?? false })
        kill(notifier.processIdentifier, SIGTERM)
        XCTAssertEqual(notifier.waitForExit(timeout: 30).flatMap(SpawnedProcess.exitCode), 0, "SIGTERM stops it cleanly")

        let (done, notices) = try noticesAndDoneTasks()
        XCTAssertGreaterThan(done.count, 500, "the Garden's done tasks went with it; the others stay done")
        XCTAssertEqual(Set(notices), done, "a notice for every task marked done, and none for the others")
        let twice = Dictionary(grouping: notices, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(twice, [], "no task got two notices")
        XCTAssertEqual(notices.count, done.count)
    }

    /// The notifier under a service manager of the test's: READY=1 with a status, WATCHDOG=1 while
    /// its consumer loop runs, STOPPING=1 on SIGTERM, then exit 0.
    func testTheNotifierSpeaksTypeNotify() throws {
        let tracker = trackerProgram
        let notify = try NotifySocket(path: directory.url.appendingPathComponent("notify.sock").path)
        let (notifier, log) = try startNotifier(tracker, run: 0, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while !messages.contains(where: { $0.contains("WATCHDOG=1") }), let message = notify.receive(until: deadline) { messages.append(message) }
        XCTAssertTrue(messages.first?.contains("READY=1") == true, "\(messages)")
        XCTAssertTrue(messages.first?.contains("STATUS=0 notices made") == true, "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("WATCHDOG=1") }, "the watchdog is fed: \(messages)")
        kill(notifier.processIdentifier, SIGTERM)
        var stopping = false
        while !stopping, let message = notify.receive(until: Date().addingTimeInterval(20)) { stopping = message.contains("STOPPING=1") }
        XCTAssertTrue(stopping, "STOPPING=1 on SIGTERM")
        XCTAssertEqual(notifier.waitForExit(timeout: 30).flatMap(SpawnedProcess.exitCode), 0, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    /// The example's own manifest, which users build, and this package's `tracker` target, which
    /// the tests run, build the example's sources from the same products.
    func testTheExamplesManifestDependsOnWhatThePackageBuildsItWith() throws {
        func dependencies(ofTracker package: URL) throws -> [String] {
            let scratch = directory.url.appendingPathComponent("scratch-\(package.lastPathComponent)")
            // SwiftPM locks the scratch path with a file in the temporary directory, named after
            // the path, and leaves it: removed here, as the test's other files are.
            let lock = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(scratch.path.replacingOccurrences(of: "/", with: "_") + ".lock")
            defer { try? FileManager.default.removeItem(at: lock) }  // try?: cleanup; SwiftPM may not have made it
            let dumped = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["swift", "package", "--package-path", package.path, "--scratch-path", scratch.path, "dump-package"],
                timeout: 120)
            XCTAssertEqual(dumped.status, 0, dumped.error)
            let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(dumped.output.utf8)) as? [String: Any])
            let targets = try XCTUnwrap(manifest["targets"] as? [[String: Any]])
            let tracker = try XCTUnwrap(targets.first { $0["name"] as? String == "tracker" }, "\(package.path) has a tracker target")
            let path = tracker["path"] as? String
            XCTAssertTrue(path == nil || path == "examples/tracker/Sources/tracker", "the tracker target reads the example's sources: \(path ?? "")")
            return try XCTUnwrap(tracker["dependencies"] as? [[String: Any]]).compactMap { dependency in
                // {"product": [name, package, …]} or {"byName": [name, …]}
                (dependency.values.first as? [Any])?.first as? String
            }
        }
        let example = try dependencies(ofTracker: repository.appendingPathComponent("examples/tracker"))
        let here = try dependencies(ofTracker: repository)
        XCTAssertEqual(Set(example), Set(here))
        XCTAssertEqual(Set(example), ["AmbarModels", "SharedStoreIPC", "AmbarSystemd", "ServiceLifecycle", "Logging"])
    }

    /// The deployment article shows the notifier's code and unit as they are in the repository.
    func testTheDeploymentArticleShowsTheNotifierAsItIs() throws {
        let article = try String(
            contentsOf: repository.appendingPathComponent("Sources/SharedStoreIPC/Documentation.docc/DeployingWithSystemd.md"), encoding: .utf8)
        for file in ["examples/tracker/Sources/tracker/Notifier.swift", "systemd/examples/tracker-notifier@.service"] {
            let text = try String(contentsOf: repository.appendingPathComponent(file), encoding: .utf8)
            XCTAssertTrue(article.contains(text.trimmingCharacters(in: .newlines)), "the article shows \(file) as it is")
        }
    }
}
