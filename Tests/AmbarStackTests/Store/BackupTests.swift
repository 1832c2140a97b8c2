import AmbarStack
import AmbarTestSupport
import Foundation
import Synchronization
import XCTest

/// Online backup: taken while another connection keeps writing, each copy opens, passes
/// integrity_check and holds whole transactions only.
final class BackupTests: XCTestCase {
    func testBackupsDuringConcurrentWritesAreConsistent() throws {
        let directory = try TemporaryDirectory()
        let model = try TestModel.make()
        let file = directory.file("live.sqlite")
        let source = try PersistentStoreCoordinator(model: model, store: .sqlite(file))
        let stop = Atomic<Bool>(false)
        let saves = Atomic<Int>(0)
        let writerDone = DispatchSemaphore(value: 0)
        Thread {
            defer { writerDone.signal() }
            do {
                // Another connection pool, as another process would have.
                let writer = try PersistentStoreCoordinator(model: model, store: .sqlite(file))
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: writer)
                while !stop.load(ordering: .relaxed) {
                    try context.performAndWait { () throws(AmbarError) in
                        for i in 0..<10 { try context.insert(Employee.self).name = "E\(i)" }
                        try context.save()
                        try context.reset()
                    }
                    saves.add(1, ordering: .relaxed)
                }
            } catch {
                XCTFail("writer: \(error)")
            }
        }.start()
        let started = Date().addingTimeInterval(30)
        while saves.load(ordering: .relaxed) < 5 {
            guard Date() < started else {
                stop.store(true, ordering: .relaxed)
                return XCTFail("the writer did not commit five saves within 30 s")
            }
            usleep(1000)
        }
        var counts: [Int] = []
        for n in 0..<3 {
            let copy = directory.file("backup-\(n).sqlite")
            try source.backup(to: copy)
            let restored = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: copy), store: .sqlite(copy))
            XCTAssertEqual(try restored.integrityCheck(), [])
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: restored)
            let count = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Employee")) }
            XCTAssertEqual(count % 10, 0, "whole transactions only: \(count)")
            XCTAssertEqual(try restored.currentHistoryToken(), Int64(count / 10), "the ledger matches the rows")
            counts.append(count)
            usleep(20_000)
        }
        stop.store(true, ordering: .relaxed)
        writerDone.wait()
        XCTAssertGreaterThan(counts.last ?? 0, 0)
        XCTAssertEqual(counts, counts.sorted(), "later backups hold later states")
        XCTAssertThrowsError(try source.backup(to: directory.file("backup-0.sqlite")), "never overwrites") { error in
            guard case .invalidArgument = error as? AmbarError else { return XCTFail("\(error)") }
        }
    }
}
