import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A fruit as a plain model.
struct Fruit: CoreModel, Equatable, Sendable {
    var uid: String
    var name: String
    var code: String? = nil
}

/// A fruit as a record.
final class FruitRecord: ManagedObject, RecordFromModel, RecordToModel, SyncRecord {
    typealias ModelType = Fruit
    override class var entityName: String { "Fruit" }
    @Managed("uid") var uid: String
    @Managed("name") var name: String
    @Managed("code") var code: String?
    @Managed("isUploaded") var isUploaded: Bool
    @Managed("wasDeleted") var wasDeleted: Bool
    static let sort: SortInfo? = SortInfo(columns: [SortColumn(key: "name")])

    func fromModel(_ model: Fruit) {
        uid = model.uid
        name = model.name
        code = model.code
    }

    func toModel() -> Fruit { Fruit(uid: uid, name: name, code: code) }
}

/// A record whose uid attribute is not called `uid` (row 60).
final class SettingRecord: ManagedObject, RecordToModel {
    struct Setting: CoreModel, Equatable { var uid: String }
    typealias ModelType = Setting
    override class var entityName: String { "Setting" }
    static var uidKey: String { "key" }
    @Managed("key") var key: String
    var uid: String { key }
    func toModel() -> Setting { Setting(uid: key) }
}

/// Y—Persistence's manager on AmbarStack and the seed's test
/// scenarios, with decisions D5–D7.
final class PersistenceManagerTests: XCTestCase {
    var directory: TemporaryDirectory!
    var manager: PersistenceManager!

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            entities: [
                EntityDescription(
                    "Fruit",
                    properties: [
                        .attribute("uid", .string, indexed: true),
                        .attribute("name", .string),
                        .attribute("code", .string, optional: true),
                        .attribute("isUploaded", .boolean, defaultValue: false),
                        .attribute("wasDeleted", .boolean, defaultValue: false),
                    ], uniquenessConstraints: [["code"]]),
                EntityDescription("Setting", properties: [.attribute("key", .string, defaultValue: "k")]),
            ], classes: [FruitRecord.self, SettingRecord.self])
    }

    override func setUp() async throws {
        directory = try TemporaryDirectory()
        manager = PersistenceManager(model: .model(try Self.model()), classes: [FruitRecord.self, SettingRecord.self], storeURL: directory.url, name: "fruits")
        try await manager.load()
    }

    override func tearDown() {
        manager = nil
        directory = nil
    }

    let fruits = [Fruit(uid: "1", name: "apple"), Fruit(uid: "2", name: "banana"), Fruit(uid: "3", name: "cherry"), Fruit(uid: "4", name: "date")]

    func storedNames() throws -> [String] {
        try manager.fetchModels(entity: FruitRecord.self).map(\.name).sorted()
    }

    /// Inserts records directly, duplicates allowed.
    func insertRecords(_ models: [Fruit]) throws {
        let context = try manager.workerContext
        try context.performAndWait { () throws in
            for model in models { try context.insert(FruitRecord.self).fromModel(model) }
            try context.save()
        }
    }

    // Row 3 (load twice), row 41–43 (contexts and policy)
    func testLoadTwiceAndContexts() async throws {
        do {
            try await manager.load()
            XCTFail("a second load is refused")
        } catch {}
        let first = try manager.workerContext
        let second = try manager.workerContext
        XCTAssertFalse(first === second, "a fresh worker on each access")
        XCTAssertEqual(first.mergePolicy, .error, "the configured policy")
        let strict = PersistenceManager(model: .model(try Self.model()), storeType: .inMemory, mergePolicy: .mergeByPropertyObjectTrump)
        try await strict.load()
        XCTAssertEqual(try strict.workerContext.mergePolicy, .mergeByPropertyObjectTrump)
        XCTAssertEqual(try strict.mainContext.mergePolicy, .mergeByPropertyObjectTrump)
    }

    // Row 40 and D5
    func testContextForThreadIsPerThreadPerManagerAndDroppedOnDestroy() async throws {
        let other = PersistenceManager(model: .model(try Self.model()), storeType: .inMemory)
        try await other.load()
        let manager = self.manager!
        let ids = try await onThread {
            let a = try manager.contextForThread()
            let b = try manager.contextForThread()
            let c = try other.contextForThread()
            return (a === b, a === c, a.identifier)
        }
        XCTAssertTrue(ids.0, "same thread: the same context")
        XCTAssertFalse(ids.1, "two managers on one thread: different contexts")
        let elsewhere = try await onThread { try manager.contextForThread().identifier }
        XCTAssertNotEqual(elsewhere, ids.2, "another thread: another context")
        // One long-lived thread, before and after destroy.
        let worker = WorkerThread()
        defer { worker.finish() }
        let before = try worker.run { try manager.contextForThread().identifier }
        XCTAssertEqual(try worker.run { try manager.contextForThread().identifier }, before, "cached on that thread")
        try await manager.destroy()
        let after = try worker.run { () throws -> (ContextIdentifier, Int) in
            let context = try manager.contextForThread()
            let count = try context.performAndWait { try manager.fetchRecords(FruitRecord.self, context: context).count }
            return (context.identifier, count)
        }
        XCTAssertNotEqual(after.0, before, "destroy drops the cached context, on the same thread")
        XCTAssertEqual(after.1, 0)
        let onMain = try await MainActor.run { try manager.contextForThread() === manager.mainContext }
        XCTAssertTrue(onMain, "the main thread gets the main context")
    }

    /// Runs `body` on a new thread and returns its result.
    func onThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }

    // Row 61
    func testFetchRecordsRunsOnItsContextsQueueOnly() throws {
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        let worker = try manager.workerContext
        XCTAssertThrowsError(try manager.fetchRecords(FruitRecord.self, context: worker)) { error in
            guard case .wrongQueue = error as? AmbarError else { return XCTFail("\(error)") }
        }
        let names = try worker.performAndWait {
            try manager.fetchRecords(FruitRecord.self, sortDescriptors: [Key<String>("name").sorted(ascending: false)], context: worker).map(\.name)
        }
        XCTAssertEqual(names, ["date", "cherry", "banana", "apple"])
        let main = try manager.mainContext
        XCTAssertEqual(try manager.fetchRecords(FruitRecord.self, predicate: Key<String>("name") == "apple", context: main).first?.isFault, false)
    }

    // Row 62 and D6
    func testFetchModelsByUids() throws {
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        XCTAssertEqual(try manager.fetchModels(entity: FruitRecord.self, uids: ["1", "3", "abad1dea"]).map(\.name), ["apple", "cherry"])
        XCTAssertEqual(try manager.fetchModels(entity: FruitRecord.self).count, 4, "nil: every record")
        XCTAssertEqual(try manager.fetchModels(entity: FruitRecord.self, uids: []).count, 0, "empty: none (D6; the seed returned all)")
        XCTAssertEqual(try manager.fetchModel(entity: FruitRecord.self, uid: "2"), Fruit(uid: "2", name: "banana"))
        XCTAssertNil(try manager.fetchModel(entity: FruitRecord.self, uid: "9"))
    }

    // Row 60
    func testACustomUidKey() throws {
        let worker = try manager.workerContext
        try worker.performAndWait { () throws in
            for key in ["theme", "locale"] { try worker.insert(SettingRecord.self).key = key }
            try worker.save()
        }
        XCTAssertEqual(try manager.fetchModels(entity: SettingRecord.self, uids: ["locale", "nope"]), [SettingRecord.Setting(uid: "locale")])
        try manager.delete(entity: SettingRecord.self, uid: "theme")
        XCTAssertEqual(try manager.fetchModels(entity: SettingRecord.self).map(\.uid), ["locale"])
    }

    // Row 63 and D7
    func testDeletes() throws {
        try insertRecords((0..<70).map { Fruit(uid: "\($0)", name: "f\($0)") })
        XCTAssertEqual(try manager.delete(entity: FruitRecord.self, predicate: nil, saveEvery: 25), 70)
        XCTAssertEqual(try storedNames(), [])
        try insertRecords(fruits + [Fruit(uid: "2", name: "banana again")])
        try manager.delete(entity: FruitRecord.self, uid: "2")
        XCTAssertEqual(try storedNames(), ["apple", "cherry", "date"], "duplicates of a uid all go")
        XCTAssertEqual(try manager.delete(entity: FruitRecord.self, uids: []), 0, "an empty list deletes nothing")
        XCTAssertEqual(try manager.delete(entity: FruitRecord.self, uids: ["nope"]), 0)
        try manager.deleteModels(entity: FruitRecord.self, models: [fruits[0], fruits[2]])
        XCTAssertEqual(try storedNames(), ["date"])
    }

    // Row 64 and D7
    func testSaveOverwriteLeavesExactlyTheModelsAndIsAtomic() throws {
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: true)
        try manager.save(entity: FruitRecord.self, models: [Fruit(uid: "2", name: "BANANA"), Fruit(uid: "9", name: "kiwi")], shouldOverwrite: true)
        XCTAssertEqual(try storedNames(), ["BANANA", "kiwi"])
        // Two models claiming the same unique code: the save fails and nothing changes.
        XCTAssertThrowsError(
            try manager.save(
                entity: FruitRecord.self,
                models: [
                    Fruit(uid: "5", name: "x", code: "same"), Fruit(uid: "6", name: "y", code: "same"),
                ], shouldOverwrite: true))
        XCTAssertEqual(try storedNames(), ["BANANA", "kiwi"], "not the seed's data loss")
        try manager.save(entity: FruitRecord.self, models: [], shouldOverwrite: true)
        XCTAssertEqual(try storedNames(), [], "an empty overwrite empties the entity")
    }

    // Row 65: the seed's upsert scenarios
    func testSaveUpsertAndDedupe() throws {
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        try manager.save(entity: FruitRecord.self, models: [Fruit(uid: "5", name: "elderberry"), Fruit(uid: "6", name: "fig")], shouldOverwrite: false)
        XCTAssertEqual(try storedNames().count, 6, "4 + 2 new")
        try manager.save(entity: FruitRecord.self, models: [], shouldOverwrite: false)
        XCTAssertEqual(try storedNames().count, 6, "empty upsert: no-op")

        try manager.save(entity: FruitRecord.self, models: [], shouldOverwrite: true)
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        try manager.save(entity: FruitRecord.self, models: [Fruit(uid: "1", name: "APPLE"), Fruit(uid: "7", name: "grape")], shouldOverwrite: false)
        XCTAssertEqual(try storedNames(), ["APPLE", "banana", "cherry", "date", "grape"], "4 + (1 update, 1 new) = 5")

        try manager.save(entity: FruitRecord.self, models: [], shouldOverwrite: true)
        try insertRecords([
            Fruit(uid: "1", name: "apple"), Fruit(uid: "2", name: "banana"), Fruit(uid: "2", name: "banana"),
            Fruit(uid: "3", name: "cherry"), Fruit(uid: "8", name: "mango"), Fruit(uid: "8", name: "mango"), Fruit(uid: "8", name: "mango"),
        ])
        try manager.save(entity: FruitRecord.self, models: [Fruit(uid: "2", name: "banana"), Fruit(uid: "8", name: "mango")], shouldOverwrite: false)
        XCTAssertEqual(try storedNames(), ["apple", "banana", "cherry", "mango"], "7 rows with duplicates + [banana, mango] = 4")

        try manager.save(entity: FruitRecord.self, models: [Fruit(uid: "9", name: "lime"), Fruit(uid: "9", name: "lemon")], shouldOverwrite: false)
        XCTAssertEqual(try manager.fetchModels(entity: FruitRecord.self, uids: ["9"]).map(\.name), ["lemon"], "duplicates in the input collapse to the last")
    }

    // Row 66
    func testBatchDeleteMergesIntoMainAndClearHonoursTheOverride() throws {
        final class KeepSettings: PersistenceManager, @unchecked Sendable {
            override func entityNamesForClear() throws(AmbarError) -> [String] { ["Fruit"] }
        }
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        let main = try manager.mainContext
        let apple = try XCTUnwrap(try manager.fetchRecords(FruitRecord.self, predicate: Key<String>("uid") == "1", context: main).first).objectID
        let observed = expectation(description: "main sees the batch delete")
        let observation = main.observeObjectsDidChange { note in if note.deleted.contains(apple) || note.invalidated.contains(apple) { observed.fulfill() } }
        try manager.batchDeleteAll(entity: FruitRecord.self)
        wait(for: [observed], timeout: 5)
        observation.cancel()
        XCTAssertEqual(try FruitRecord.count(in: main), 0)

        let keeper = KeepSettings(model: .model(try Self.model()), classes: [FruitRecord.self, SettingRecord.self], storeURL: directory.url, name: "fruits")
        let loaded = expectation(description: "loaded")
        keeper.load { ok in
            XCTAssertTrue(ok)
            loaded.fulfill()
        }
        wait(for: [loaded], timeout: 10)
        try keeper.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        let worker = try keeper.workerContext
        try worker.performAndWait { () throws in
            _ = try worker.insert(SettingRecord.self)
            try worker.save()
        }
        try keeper.clear()
        try worker.performAndWait { () throws in
            XCTAssertEqual(try FruitRecord.count(in: worker), 0)
            XCTAssertEqual(try SettingRecord.count(in: worker), 1, "the override kept the settings")
        }
    }

    // Row 67
    func testDestroyEmptiesTheStore() async throws {
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        let old = try manager.workerContext
        try await manager.destroy()
        XCTAssertEqual(try storedNames(), [])
        XCTAssertThrowsError(try old.performAndWait { try FruitRecord.count(in: old) }, "a context from before destroy does not return old data")
    }

    // Row 68: the seed's SyncTests
    func testSyncMarkers() throws {
        try manager.save(entity: FruitRecord.self, models: fruits, shouldOverwrite: false)
        try manager.markRecordsAsUploaded(entity: FruitRecord.self, uids: ["1"])
        try manager.markRecordsAsDeleted(entity: FruitRecord.self, uids: ["2"])
        let worker = try manager.workerContext
        try worker.performAndWait { () throws in
            XCTAssertEqual(try manager.fetchRecordsToUpload(FruitRecord.self, context: worker).map(\.name), ["banana", "cherry", "date"])
            XCTAssertEqual(try manager.fetchRecordsToUpdate(FruitRecord.self, context: worker).map(\.name), ["cherry", "date"])
            XCTAssertEqual(try manager.fetchRecordsToDelete(FruitRecord.self, context: worker).map(\.name), ["banana"])
        }
        try manager.markAllRecordsAsDeleted(entity: FruitRecord.self)
        try worker.performAndWait { () throws in
            try worker.reset()
            XCTAssertEqual(try manager.fetchRecordsToDelete(FruitRecord.self, context: worker).count, 4, "apple too: marked deleted, so no longer uploaded")
        }
    }

    // Row 69
    func testSortInfoKeepsColumnOrder() {
        let info = SortInfo(columns: [SortColumn(key: "name"), SortColumn(key: "uid", ascending: false)])
        XCTAssertEqual(info.descriptors, [ObjectSortDescriptor(key: "name"), ObjectSortDescriptor(key: "uid", ascending: false)])
        XCTAssertEqual(SortColumn(key: "a"), SortColumn(key: "a", ascending: true))
    }

    // Row 37
    func testSaveChangesStopsAtACleanContextButSaveChangesAndWaitGoesOn() throws {
        let main = try manager.mainContext
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: main, name: "child")
        try main.insert(FruitRecord.self).fromModel(Fruit(uid: "1", name: "apple"))
        let done = expectation(description: "completion")
        child.saveChanges { error in
            XCTAssertNil(error)
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertTrue(main.hasChanges, "async: a child without changes stops the chain")
        try child.saveChangesAndWait()
        XCTAssertFalse(main.hasChanges, "sync: goes on to the parent")
        XCTAssertEqual(try storedNames(), ["apple"])
    }
}

/// A thread that runs the blocks it is given, one at a time, until finished.
final class WorkerThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var finished = false

    init() {
        Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty && !finished { condition.wait() }
                if jobs.isEmpty && finished {
                    condition.unlock()
                    return
                }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }.start()
    }

    /// Runs `body` on the thread and waits for its result.
    func run<R>(_ body: @escaping () throws -> R) throws -> R {
        let done = DispatchSemaphore(value: 0)
        var result: Result<R, any Error>!
        condition.lock()
        jobs.append {
            result = Result { try body() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try result.get()
    }

    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }
}
