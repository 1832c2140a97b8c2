import AmbarStack
import AmbarTestSupport
import Foundation
import Synchronization
import XCTest

/// The Ambar stack: setup, location, coordinators, the four kinds of context, the smart merge,
/// parallel importers and store deletion (decisions D1, D2 and D4).
final class DataStackTests: ModelTestCase {
    func openStack(separate: Bool = true, name: String = "stack") throws -> DataStack {
        try DataStack.open(model: .model(model), storeURL: directory.url, name: name, usingSeparateCoordinators: separate)
    }

    /// Saves employees E0… with salary 1 through an importer; returns their IDs.
    func seedEmployees(_ stack: DataStack, count: Int) throws -> [ManagedObjectID] {
        let seed = try stack.importerContext()
        return try seed.performAndWait {
            let list = try (0..<count).map { i -> Employee in
                let e = try seed.insert(Employee.self)
                e.name = "E\(i)"
                e.salary = 1
                return e
            }
            try seed.save()
            return list.map(\.objectID)
        }
    }

    // Rows 1, 2: deferred setup, ready flag, completion once on main after isReady.
    func testSetupIsDeferredAndTheCompletionRunsOnceOnMain() throws {
        let calls = Collector<(Bool, Bool)>()
        var stack: DataStack? = DataStack(model: .model(model), storeURL: directory.url, name: "async") { result in
            calls.append((Thread.isMainThread, (try? result.get()) != nil))
        }
        XCTAssertFalse(stack!.isReady, "init returns before setup")
        XCTAssertThrowsError(try stack!.mainContext) { XCTAssertEqual($0 as? AmbarError, .stackNotReady) }
        XCTAssertTrue(pumpMainQueue { stack!.isReady })
        XCTAssertTrue(pumpMainQueue { calls.all.count == 1 })
        XCTAssertTrue(drainMainQueue())
        XCTAssertEqual(calls.all.count, 1, "exactly once")
        XCTAssertEqual(calls.all.first?.0, true, "on the main thread")
        XCTAssertEqual(calls.all.first?.1, true, "success")
        XCTAssertNoThrow(try stack!.mainContext)
        stack = nil
    }

    // Row 3: load() waits; repeated loads return at once.
    func testLoadAwaitsSetupAndIsIdempotent() async throws {
        let stack = DataStack(model: .model(model), storeURL: directory.url, name: "awaited")
        try await stack.load()
        XCTAssertTrue(stack.isReady)
        try await stack.load()
    }

    // Row 4, 6, 73: failures are errors delivered through every channel, never crashes.
    func testSetupFailuresAreTypedErrors() async throws {
        XCTAssertThrowsError(try DataStack.open(model: .named("Missing", directory: directory.url), storeURL: directory.url)) {
            guard case .modelNotFound("Missing", let searched) = $0 as? AmbarError else { return XCTFail("\($0)") }
            XCTAssertEqual(searched, [directory.url.path])
        }
        let failures = Collector<AmbarError>()
        let stack = DataStack(model: .named("Missing", directory: directory.url), storeURL: directory.url) { result in
            if case .failure(let error) = result { failures.append(error) }
        }
        do {
            try await stack.load()
            XCTFail("expected failure")
        } catch {
            guard case .modelNotFound = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(pumpMainQueue { failures.all.count == 1 })
        XCTAssertFalse(stack.isReady)
        XCTAssertThrowsError(try stack.importerContext())
    }

    // Row 6: model files by name, and all models merged.
    func testModelsLoadByNameOrAllMerged() throws {
        let models = directory.url.appendingPathComponent("Models", isDirectory: true)
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let a = try ManagedObjectModel(entities: [EntityDescription("Alpha", properties: [.attribute("x", .string)])])
        let b = try ManagedObjectModel(entities: [EntityDescription("Beta", properties: [.attribute("y", .string)])])
        try JSONEncoder().encode(a).write(to: models.appendingPathComponent("A.json"))
        try JSONEncoder().encode(b).write(to: models.appendingPathComponent("B.json"))
        XCTAssertEqual(try ModelSource.named("A", directory: models).load().entityNames, ["Alpha"])
        XCTAssertEqual(try ModelSource.allModels(directory: models).load().entityNames, ["Alpha", "Beta"])
        try "not json".write(to: models.appendingPathComponent("C.json"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelSource.named("C", directory: models).load()) {
            guard case .invalidModel(let reason) = $0 as? AmbarError else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("C.json"))
        }
    }

    // Rows 8, 9, 10: locations.
    func testLocationsFollowSystemdAndXDG() {
        XCTAssertEqual(
            StoreLocation.defaultDirectory(name: "n", environment: ["STATE_DIRECTORY": "/var/lib/a:/var/lib/b", "XDG_DATA_HOME": "/x"]).path, "/var/lib/a")
        XCTAssertEqual(StoreLocation.defaultDirectory(name: "n", environment: ["XDG_DATA_HOME": "/x"]).path, "/x/n")
        XCTAssertEqual(StoreLocation.defaultDirectory(name: "n", environment: ["HOME": "/home/u"]).path, "/home/u/.local/share/n")
        XCTAssertEqual(StoreLocation.storeFile(for: nil, name: "n", environment: ["STATE_DIRECTORY": "/s"]).path, "/s/n.sqlite")
        XCTAssertEqual(StoreLocation.storeFile(for: URL(fileURLWithPath: "/tmp/dir/", isDirectory: true), name: "n").path, "/tmp/dir/n.sqlite")
        XCTAssertEqual(StoreLocation.storeFile(for: URL(fileURLWithPath: "/tmp/x/y.db"), name: "n").path, "/tmp/x/y.db")
        XCTAssertFalse(StoreLocation.defaultName.isEmpty)
        XCTAssertEqual(StoreLocation.defaultName.trimmingCharacters(in: CharacterSet.alphanumerics.inverted), StoreLocation.defaultName)
    }

    func testStoreFileIsCreatedWithParentsAndGroupWritable() throws {
        let file = directory.url.appendingPathComponent("a/b/c/store.sqlite")
        let stack = try DataStack.open(model: .model(model), storeURL: file)
        XCTAssertEqual(stack.storeURL, file)
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o660)
        let main = try stack.mainContext
        let e = try main.insert(Employee.self)
        e.name = "x"
        try main.save()
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path + "-wal"), "WAL mode (row 15)")
    }

    // Rows 7, 17, 18, 19, 20.
    func testCoordinatorsAndMainContextConfiguration() throws {
        let stack = try openStack()
        XCTAssertTrue(stack.isUsingSeparateCoordinators)
        XCTAssertFalse(try stack.mainCoordinator === stack.writerCoordinator)
        XCTAssertEqual(try stack.mainCoordinator.storeLocation, try stack.writerCoordinator.storeLocation)
        let main = try stack.mainContext
        XCTAssertTrue(main === (try stack.viewContext))
        XCTAssertEqual(main.concurrencyType, .mainQueue)
        XCTAssertTrue(main.persistentStoreCoordinator === (try stack.mainCoordinator))
        XCTAssertEqual(main.mergePolicy, .mergeByPropertyStoreTrump)
        let single = try openStack(separate: false, name: "single")
        XCTAssertTrue(try single.mainCoordinator === single.writerCoordinator)
        let memory = try DataStack.open(storeType: .inMemory, model: .model(model))
        XCTAssertNil(memory.storeURL)
        XCTAssertFalse(memory.isUsingSeparateCoordinators)
        XCTAssertTrue(try memory.mainCoordinator === memory.writerCoordinator)
    }

    // Row 21.
    func testImporterContextsWriteStraightToTheStore() throws {
        let stack = try openStack()
        let a = try stack.importerContext()
        let b = try stack.importerContext()
        XCTAssertFalse(a === b)
        XCTAssertEqual(a.mergePolicy, .mergeByPropertyObjectTrump)
        XCTAssertTrue(a.persistentStoreCoordinator === (try stack.writerCoordinator))
        try a.performAndWait {
            let e = try a.insert(Employee.self)
            e.name = "Imported"
            try a.save()
        }
        let main = try stack.mainContext
        XCTAssertEqual(try main.fetch(FetchRequest<Employee>()).map(\.name), ["Imported"])
    }

    // Row 22, decision D1: temporary contexts never write.
    func testTemporaryContextRefusesToSaveAndKeepsChanges() throws {
        let stack = try openStack()
        let temporary = try stack.temporaryContext()
        XCTAssertTrue(temporary.persistentStoreCoordinator === (try stack.mainCoordinator))
        try temporary.performAndWait {
            let e = try temporary.insert(Employee.self)
            e.name = "Scratch"
            XCTAssertThrowsError(try temporary.save()) {
                guard case .saveRefused = $0 as? AmbarError else { return XCTFail("\($0)") }
            }
            XCTAssertTrue(e.isInserted)
            XCTAssertEqual(try temporary.fetch(FetchRequest<Employee>()).count, 1)
        }
        XCTAssertEqual(try stack.mainContext.count(for: FetchRequest<Employee>()), 0)
    }

    /// Batch operations write past every context, so a context that never writes refuses them too.
    func testContextsThatNeverWriteRefuseBatchesToo() throws {
        let stack = try openStack()
        _ = try seedEmployees(stack, count: 2)
        let temporary = try stack.temporaryContext()
        try temporary.performAndWait {
            for attempt in [
                { _ = try temporary.batchDelete(FetchRequest<Employee>()) },
                { _ = try temporary.batchUpdate(FetchRequest<Employee>(), set: ["salary": .double(9)]) },
                { _ = try temporary.batchInsert(entityName: "Employee", rows: [["name": .string("X")]]) },
            ] as [() throws -> Void] {
                XCTAssertThrowsError(try attempt()) {
                    guard case .saveRefused = $0 as? AmbarError else { return XCTFail("\($0)") }
                }
            }
        }
        stack.isMainContextReadOnly = true
        XCTAssertThrowsError(try stack.mainContext.batchDelete(FetchRequest<Employee>())) {
            guard case .saveRefused = $0 as? AmbarError else { return XCTFail("\($0)") }
        }
        let reader = try stack.importerContext()
        let salaries = try reader.performAndWait { try reader.fetch(FetchRequest<Employee>()).map(\.salary) }
        XCTAssertEqual(salaries, [1, 1], "nothing was written")
    }

    // Rows 23, 24, decision D1: editor saves reach the store in one call; read-only main refuses.
    func testEditorSavesThroughMainAndReadOnlyMainRefuses() throws {
        let stack = try openStack()
        let main = try stack.mainContext
        let editor = try stack.editorContext()
        XCTAssertTrue(editor.parent === main)
        XCTAssertEqual(editor.mergePolicy, .mergeByPropertyObjectTrump)
        let id: ManagedObjectID = try editor.performAndWait {
            let e = try editor.insert(Employee.self)
            e.name = "Edited"
            try editor.save(propagating: true)
            return e.objectID
        }
        XCTAssertFalse(main.hasChanges)
        XCTAssertNotNil(main.registeredObject(for: id))
        let fresh = try DataStack.open(model: .model(model), storeURL: directory.url, name: "stack")
        XCTAssertEqual(try fresh.mainContext.fetch(FetchRequest<Employee>()).map(\.name), ["Edited"])

        stack.isMainContextReadOnly = true
        XCTAssertThrowsError(try stack.editorContext()) {
            guard case .saveRefused = $0 as? AmbarError else { return XCTFail("\($0)") }
        }
        let e = try main.insert(Employee.self)
        e.name = "Refused"
        XCTAssertThrowsError(try main.save()) {
            guard case .saveRefused = $0 as? AmbarError else { return XCTFail("\($0)") }
        }
        XCTAssertTrue(e.isInserted, "kept in memory")
        stack.isMainContextReadOnly = false
        try main.save()
    }

    // Rows 25, 28, 29: the smart merge, asynchronous, refreshing only registered objects.
    func testImporterSavesMergeIntoMainAsynchronously() throws {
        let stack = try openStack()
        let main = try stack.mainContext
        let ids = try seedEmployees(stack, count: 3)
        XCTAssertTrue(drainMainQueue(), "the seed's merge into main ran")
        let loaded = try XCTUnwrap(try main.existingObject(with: ids[0]) as? Employee)
        XCTAssertEqual(loaded.salary, 1)
        let importer = try stack.importerContext()
        try importer.performAndWait {
            for id in ids { (try importer.existingObject(with: id) as? Employee)?.salary = 2 }
            try importer.save()
        }
        XCTAssertEqual(loaded.salary, 1, "the merge does not block the saver; it runs on main's queue later")
        XCTAssertTrue(pumpMainQueue { loaded.salary == 2 })
        XCTAssertEqual(main.registeredObjectCount, 1, "only registered objects are refreshed")

        stack.shouldMergeIncomingSavedObjects = false
        try importer.performAndWait {
            (try importer.existingObject(with: ids[0]) as? Employee)?.salary = 3
            try importer.save()
        }
        XCTAssertTrue(drainMainQueue(), "whatever the save enqueued on main has run")
        XCTAssertEqual(loaded.salary, 2, "merging off")
        stack.shouldMergeIncomingSavedObjects = true
        try importer.performAndWait {
            (try importer.existingObject(with: ids[0]) as? Employee)?.name = "Renamed"
            try importer.save()
        }
        XCTAssertTrue(pumpMainQueue { loaded.name == "Renamed" })
        XCTAssertEqual(loaded.salary, 3)
    }

    /// Batch operations bypass contexts, but a stack's main context still follows them: from an
    /// importer, from a context on the main coordinator, and from main itself.
    func testBatchesMergeIntoMain() throws {
        let stack = try openStack()
        let main = try stack.mainContext
        let ids = try seedEmployees(stack, count: 4)
        XCTAssertTrue(drainMainQueue(), "the seed's merge into main ran")
        let loaded = try ids.map { try XCTUnwrap(try main.existingObject(with: $0) as? Employee) }
        XCTAssertEqual(loaded.map(\.salary), [1, 1, 1, 1])

        let importer = try stack.importerContext()
        _ = try importer.performAndWait { try importer.batchUpdate(FetchRequest<Employee>(), set: ["salary": .double(2)]) }
        XCTAssertTrue(pumpMainQueue { loaded.allSatisfy { $0.salary == 2 } }, "an importer's batch update reaches main")

        let mainRoot = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try stack.mainCoordinator)
        _ = try mainRoot.performAndWait {
            try mainRoot.batchUpdate(FetchRequest<Employee>(predicate: Key<String>("name") == "E0"), set: ["salary": .double(3)])
        }
        XCTAssertTrue(pumpMainQueue { loaded[0].salary == 3 }, "a batch on the main coordinator reaches main")

        _ = try main.batchDelete(FetchRequest<Employee>(predicate: Key<String>("name") == "E1"))
        XCTAssertTrue(pumpMainQueue { main.registeredObject(for: ids[1]) == nil }, "main's own batch delete reaches main")
        XCTAssertEqual(try main.count(for: FetchRequest<Employee>()), 3)
        XCTAssertEqual(loaded[2].salary, 2)
    }

    // Rows 26, 27, 35, decision D2: only saves of root contexts on the writer coordinator merge.
    func testMergeFilterWriterOnly() throws {
        let stack = try openStack()
        let other = try openStack(name: "other")
        let main = try stack.mainContext
        let changes = Collector<ObjectsDidChangeNotification>()
        let observation = main.observeObjectsDidChange { changes.append($0) }
        defer { observation.cancel() }
        func merges(_ body: () throws -> Void) rethrows -> Bool {
            // Merges are enqueued on main when the save is announced: draining main runs them.
            XCTAssertTrue(drainMainQueue())
            let before = changes.all.filter { !$0.inserted.isEmpty }.count
            try body()
            XCTAssertTrue(drainMainQueue())
            return changes.all.filter { !$0.inserted.isEmpty }.count > before
        }
        func insert(_ context: ManagedObjectContext, _ name: String) throws {
            try context.performAndWait {
                let e = try context.insert(Employee.self)
                e.name = name
                try context.save()
            }
        }
        XCTAssertTrue(try merges { try insert(stack.importerContext(), "importer") }, "importer save merges")
        let writerRoot = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try stack.writerCoordinator)
        XCTAssertTrue(try merges { try insert(writerRoot, "writer root") }, "any root context on the writer coordinator")
        let mainRoot = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try stack.mainCoordinator)
        XCTAssertFalse(try merges { try insert(mainRoot, "main coordinator") }, "contexts on the main coordinator do not")
        XCTAssertFalse(try merges { try insert(other.importerContext(), "other stack") }, "other stacks do not")
        let editor = try stack.editorContext()
        XCTAssertTrue(try merges { try insert(editor, "editor") }, "an editor save reaches main directly (as its child)")
        XCTAssertFalse(try merges { try main.save() }, "main's own save is not merged back")

        // One coordinator: main's saves go through the writer coordinator and must still be skipped.
        let single = try openStack(separate: false, name: "single")
        let singleMain = try single.mainContext
        let seen = Collector<ObjectsDidChangeNotification>()
        let o2 = singleMain.observeObjectsDidChange { seen.append($0) }
        defer { o2.cancel() }
        let e = try singleMain.insert(Employee.self)
        e.name = "own"
        singleMain.processPendingChanges()
        let countBefore = seen.all.count
        try singleMain.save()
        XCTAssertTrue(drainMainQueue())
        XCTAssertEqual(seen.all.count, countBefore, "no merge of main's own save")
        try insert(single.importerContext(), "single importer")
        XCTAssertTrue(pumpMainQueue { seen.all.count > countBefore })
    }

    // Issue check: 10,000 updates, main holds 10: exactly those refresh, the FRC reports exactly
    // their changes, the registered count does not grow.
    func testTenThousandUpdatesRefreshOnlyTheTenRegistered() throws {
        let stack = try openStack()
        let seed = try stack.importerContext()
        try seed.performAndWait {
            _ = try seed.batchInsert(entityName: "Employee", rows: (0..<10_000).map { ["name": .string(String(format: "E%05d", $0)), "salary": .double(1)] })
        }
        // The seed's batch is merged into main too (announced, not loaded): let it land first.
        XCTAssertTrue(drainMainQueue())
        let main = try stack.mainContext
        var request = FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted()])
        request.fetchLimit = 10
        let controller = FetchedResultsController(fetchRequest: request, context: main)
        let reports = Collector<[ResultsChange]>()
        controller.onChange = { reports.append($0) }
        try controller.performFetch()
        let shown = controller.fetchedObjects
        XCTAssertEqual(shown.count, 10)
        XCTAssertEqual(main.registeredObjectCount, 10)

        let importer = try stack.importerContext()
        try importer.performAndWait {
            for e in try importer.fetch(FetchRequest<Employee>()) { e.salary = 2 }
            try importer.save()
        }
        XCTAssertTrue(pumpMainQueue { shown.allSatisfy { $0.salary == 2 } })
        XCTAssertEqual(main.registeredObjectCount, 10, "the registered-object count does not grow")
        let changes = reports.all.flatMap { $0 }
        XCTAssertEqual(changes.count, 10)
        XCTAssertEqual(Set(changes), Set(shown.enumerated().map { ResultsChange.update($1.objectID, at: ResultsIndexPath(row: $0, section: 0)) }))
    }

    // Row 74: 8 parallel importers on the same 100 rows never surface a conflict or SQLITE_BUSY.
    // Every save changes both properties it writes, so the object-trump merge keeps a save's
    // values together (a property a save leaves as it was takes the store's value, which may be
    // another importer's).
    func testParallelImportersNeverConflict() throws {
        let stack = try openStack()
        let seed = try stack.importerContext()
        try seed.performAndWait {
            _ = try seed.batchInsert(entityName: "Employee", rows: (0..<100).map { ["name": .string("E\($0)"), "salary": .double(0)] })
        }
        let errors = Collector<String>()
        let finished = Collector<Int>()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let importer = try stack.importerContext()
                for round in 0..<5 {
                    try importer.performAndWait {
                        for e in try importer.fetch(FetchRequest<Employee>()) {
                            e.salary = Double(worker * 100 + round)
                            e.age = Int16(worker * 10 + round)
                        }
                        try importer.save()
                    }
                }
                finished.append(worker)
            } catch {
                errors.append("\(error)")
            }
        }
        XCTAssertEqual(errors.all, [])
        XCTAssertEqual(finished.all.count, 8)
        let rows = try stack.mainContext.fetch(FetchRequest<Employee>())
        XCTAssertEqual(rows.count, 100)
        for e in rows {
            XCTAssertEqual(Int(e.age) % 10, 4, "each row holds an importer's last round")
            XCTAssertEqual(e.salary, Double(Int(e.age) / 10 * 100 + 4), "each row holds one importer's last write, consistently")
        }
    }

    // Row 34, decision D4.
    func testDeleteStoreRemovesFilesResetsContextsAndIsIdempotent() throws {
        let stack = try openStack()
        let main = try stack.mainContext
        let e = try main.insert(Employee.self)
        e.name = "Doomed"
        try main.save()
        let importer = try stack.importerContext()
        let file = try XCTUnwrap(stack.storeURL)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path))
        try stack.deleteStore()
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: file.path + suffix), suffix)
        }
        XCTAssertEqual(main.registeredObjectCount, 0)
        XCTAssertNil(e.managedObjectContext)
        let n = try main.insert(Employee.self)
        n.name = "After"
        XCTAssertThrowsError(try main.save()) { XCTAssertEqual($0 as? AmbarError, .storeDeleted) }
        XCTAssertThrowsError(try importer.performAndWait { try importer.fetch(FetchRequest<Employee>()) }) {
            XCTAssertEqual($0 as? AmbarError, .storeDeleted)
        }
        XCTAssertNoThrow(try stack.deleteStore(), "a second call is a no-op")
    }

    /// A fault whose read fails (here: the store was closed) stays a fault instead of becoming an
    /// empty object, so nothing mistakes a read error for a deleted row; the throwing accessor says
    /// why.
    func testAFailedReadLeavesTheFaultInPlace() throws {
        let stack = try openStack()
        let importer = try stack.importerContext()
        let id: ManagedObjectID = try importer.performAndWait {
            let e = try importer.insert(Employee.self)
            e.name = "Kept"
            try importer.save()
            return e.objectID
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try stack.writerCoordinator)
        let fault = try reader.performAndWait { try reader.object(with: id) }
        try stack.deleteStore()
        try reader.performAndWait {
            XCTAssertThrowsError(try fault.value(forKey: "name"), "nothing could be read") { XCTAssertNotNil($0 as? AmbarError, "a typed error: \($0)") }
            XCTAssertTrue(fault.isFault, "still a fault: the next access reads again")
        }
    }
}
