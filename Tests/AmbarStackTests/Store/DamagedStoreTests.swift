import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Damaged store files: a typed error by default, the file untouched; with
/// quarantine, the damaged files moved aside (never deleted) and a fresh store opened.
final class DamagedStoreTests: ModelTestCase {
    /// A real store with rows, checkpointed and closed, then damaged in the middle of its pages.
    func damagedStore() throws -> URL {
        let file = directory.file("damaged.sqlite")
        do {
            let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(file))
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait { () throws in
                for i in 0..<2000 { try context.insert(Employee.self).name = "Employee \(i) with a name long enough to fill pages" }
                try context.save()
            }
            try coordinator.checkpoint(.truncate)
        }
        let handle = try FileHandle(forUpdating: file)
        let size = try handle.seekToEnd()
        for offset in stride(from: UInt64(8192), to: size - 4096, by: 8192) {
            try handle.seek(toOffset: offset + 100)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 1500))
        }
        try handle.close()
        return file
    }

    func testADamagedStoreIsATypedErrorAndStaysAsItIs() throws {
        let file = try damagedStore()
        let before = try Data(contentsOf: file)
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: model, store: .sqlite(file))) { error in
            guard case .storeDamaged(let path, _) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, file.path)
        }
        XCTAssertEqual(try Data(contentsOf: file), before, "never touched without recovery")
    }

    func testQuarantineMovesTheDamagedFilesAsideAndOpensAnEmptyStore() throws {
        let file = try damagedStore()
        let before = try Data(contentsOf: file)
        let stack = try DataStack.open(model: .model(model), storeURL: file, name: "recovering", damagedStoreRecovery: .quarantine)
        let context = try stack.temporaryContext()
        XCTAssertEqual(try context.performAndWait { try Employee.count(in: context) }, 0, "a fresh store")
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("damaged.sqlite.corrupt-") }
        let main = try XCTUnwrap(quarantined.first { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }, "\(quarantined)")
        XCTAssertEqual(try Data(contentsOf: directory.url.appendingPathComponent(main)), before, "the damaged copy is kept byte for byte")
        XCTAssertTrue(quarantined.contains(main + "-wal"), "its sidecars move with it: \(quarantined)")
    }

    func testANonDatabaseFileIsQuarantinedToo() throws {
        let file = directory.file("junk.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: file)
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: model, store: .sqlite(file)))
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(file), recovery: .quarantine)
        XCTAssertEqual(try coordinator.currentHistoryToken(), 0)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).contains { $0.hasPrefix("junk.sqlite.corrupt-") })
    }
}
