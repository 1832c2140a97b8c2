import AmbarStack
import AmbarTestSupport
import Foundation
import GRDB
import XCTest

/// Store relocation (decision D9): Ambar's `migratingFrom:to:` done right — one setup, the
/// completion once, the data at the new place, the old file and its sidecars gone; idempotent;
/// crash-safe; and never while another process has the old store open.
final class StoreRelocationTests: XCTestCase {
    var directory: TemporaryDirectory!
    var old: URL { directory.file("old/items.sqlite") }
    var new: URL { directory.file("group/items.sqlite") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        signal(SIGPIPE, SIG_IGN)
    }
    override func tearDown() { directory = nil }

    /// A store at `url` holding `names`, closed again when this returns (a plain coordinator: a
    /// stack's main context may live on until the main queue runs).
    @discardableResult
    func makeStore(at url: URL, names: [String]) throws -> String {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(url))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            for name in names { try context.insertObject(entityName: "Item").setValue(name, forKey: "uid") }
            try context.save()
        }
        return coordinator.storeIdentifier
    }

    func names(in stack: DataStack) throws -> [String] {
        let context = try stack.importerContext()
        return try context.performAndWait { () throws in
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [Key<String>("uid").sorted()]))
                .map { try $0.value(forKey: "uid") }.compactMap { value -> String? in
                    if case .string(let s) = value { return s }
                    return nil
                }
        }
    }

    func exists(_ url: URL, _ suffix: String = "") -> Bool { FileManager.default.fileExists(atPath: url.path + suffix) }

    /// Runs the asynchronous init and returns the stack and how often its completion ran.
    @MainActor
    func relocatingStack() async throws -> (DataStack, [Result<Void, AmbarError>]) {
        var results: [Result<Void, AmbarError>] = []
        let stack = DataStack(model: .model(try itemModel()), storeURL: new, relocatingFrom: old) { results.append($0) }
        do { try await stack.load() } catch { XCTFail("setup failed: \(error)") }
        // A second (wrong) completion would be queued on the main queue, where completions run:
        // a block queued after it has run once it did.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in DispatchQueue.main.async { done.resume() } }
        return (stack, results)
    }

    @MainActor
    func testTheStoreMovesWithItsSidecarsAndTheCompletionRunsOnce() async throws {
        let uuid = try makeStore(at: old, names: ["a", "b", "c"])
        XCTAssertTrue(exists(old, "-wal"), "the store keeps a persistent WAL beside it")
        let (stack, results) = try await relocatingStack()
        XCTAssertEqual(results.count, 1, "the completion runs exactly once")
        XCTAssertEqual(stack.storeURL, new)
        XCTAssertEqual(try names(in: stack), ["a", "b", "c"])
        XCTAssertEqual(try stack.writerCoordinator.storeIdentifier, uuid, "the same store (UUID, ledger and all), not a new one")
        for suffix in ["", "-wal", "-shm"] { XCTAssertFalse(exists(old, suffix), "old\(suffix) is gone") }
        XCTAssertFalse(
            try FileManager.default.contentsOfDirectory(atPath: new.deletingLastPathComponent().path).contains { $0.contains("relocating") },
            "no temporary copy left")

        // Every later launch passes the same arguments: nothing to move, the store opens.
        let again = try DataStack.open(model: .model(try itemModel()), storeURL: new, relocatingFrom: old)
        XCTAssertEqual(try names(in: again), ["a", "b", "c"])
    }

    func testACrashAfterTheCopyIsFinishedOnTheNextLaunch() throws {
        let uuid = try makeStore(at: old, names: ["kept"])
        // The state a crash between the rename and the deletes leaves: the same store at both.
        try FileManager.default.createDirectory(at: new.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(old)).backup(to: new)
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: new, relocatingFrom: old)
        XCTAssertEqual(try names(in: stack), ["kept"])
        XCTAssertEqual(try stack.writerCoordinator.storeIdentifier, uuid)
        XCTAssertFalse(exists(old))
    }

    func testTwoDifferentStoresAreAnErrorAndNeitherIsTouched() throws {
        try makeStore(at: old, names: ["old"])
        try makeStore(at: new, names: ["new"])
        let (oldBytes, newBytes) = (try Data(contentsOf: old), try Data(contentsOf: new))
        XCTAssertThrowsError(try DataStack.open(model: .model(try itemModel()), storeURL: new, relocatingFrom: old)) { error in
            guard case .storeCannotOpen(_, let reason, _) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("different stores"), reason)
        }
        XCTAssertEqual(try Data(contentsOf: old), oldBytes)
        XCTAssertEqual(try Data(contentsOf: new), newBytes)
    }

    func testAStoreAnotherProcessHasOpenIsNotMoved() throws {
        try makeStore(at: old, names: ["busy"])
        let modelFile = directory.file("items.json")
        try JSONEncoder().encode(try itemModel()).write(to: modelFile)
        let holder = try OpenerProcess(model: modelFile, store: old)
        XCTAssertTrue(holder.line().hasPrefix("opened "))
        XCTAssertThrowsError(try DataStack.open(model: .model(try itemModel()), storeURL: new, relocatingFrom: old)) { error in
            guard case .storeCannotOpen(_, let reason, _) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("process \(holder.process.processIdentifier) has the store open"), reason)
        }
        XCTAssertTrue(exists(old))
        XCTAssertFalse(exists(new), "nothing was created at the new place")
        XCTAssertEqual(try holder.send("quit"), "bye")
        holder.process.waitUntilExit()
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: new, relocatingFrom: old)
        XCTAssertEqual(try names(in: stack), ["busy"], "once the process is gone, the move goes through")
    }

    func testAStaleWALAtTheNewPlaceIsNotReplayedIntoTheCopy() throws {
        try makeStore(at: old, names: ["right"])
        // A WAL left behind by some other database at the new path, full of committed frames.
        let other = directory.file("other.sqlite")
        let pool = try DatabasePool(path: other.path)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE junk (x BLOB)")
            for _ in 0..<50 { try db.execute(sql: "INSERT INTO junk VALUES (randomblob(3000))") }
        }
        try FileManager.default.createDirectory(at: new.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: other.path + "-wal", toPath: new.path + "-wal")
        try pool.close()
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: new, relocatingFrom: old)
        XCTAssertEqual(try names(in: stack), ["right"])
        XCTAssertEqual(try stack.writerCoordinator.integrityCheck(), [])
    }
}
