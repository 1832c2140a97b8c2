import AmbarSwiftData
import Foundation
import SwiftDataSamples
import XCTest

/// SwiftData's history (iOS 18) over Ambar's ledger: every save, in commit order, with its
/// author and changes; tokens to resume from; deleted history reported as expired.
final class HistoryTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        scratch = nil
    }

    func testTransactionsListInsertsUpdatesAndDeletesWithAuthorsAndTokens() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: scratch.file("h.store")))
        let context = ModelContext(container)
        context.author = "importer"
        let trip = Trip(name: "Turin", destination: "Italy")
        context.insert(trip)
        try context.save()
        let id = trip.persistentModelID

        let editor = ModelContext(container)
        editor.author = "editor"
        let theirs = try XCTUnwrap(editor.model(for: id) as? Trip)
        theirs.notes = "the museum"
        theirs.status = .underway
        try editor.save()
        editor.delete(theirs)
        try editor.save()

        let all = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        XCTAssertEqual(all.map(\.author), ["importer", "editor", "editor"])
        XCTAssertEqual(all.map(\.token), all.map(\.token).sorted())
        guard case .insert(let insert as DefaultHistoryInsert<Trip>)? = all[0].changes.first else {
            return XCTFail("the first transaction inserted the trip: \(all[0].changes)")
        }
        XCTAssertEqual(insert.changedPersistentIdentifier, id)
        guard case .update(let update as DefaultHistoryUpdate<Trip>)? = all[1].changes.first else {
            return XCTFail("the second changed it: \(all[1].changes)")
        }
        XCTAssertEqual(Set(update.updatedAttributes), [\Trip.notes, \Trip.status] as Set<PartialKeyPath<Trip>>)
        guard case .delete(let delete as DefaultHistoryDelete<Trip>)? = all[2].changes.first else {
            return XCTFail("the third deleted it: \(all[2].changes)")
        }
        XCTAssertEqual(delete.changedPersistentIdentifier, id)

        // A token kept (it is Codable) resumes after it.
        let kept = try JSONDecoder().decode(DefaultHistoryToken.self, from: try JSONEncoder().encode(all[0].token))
        let newer = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > kept }))
        XCTAssertEqual(newer.map(\.token), Array(all.map(\.token).dropFirst()))
        let byImporter = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "importer" }))
        XCTAssertEqual(byImporter.count, 1)
    }

    func testADeletionKeepsTheValuesOfTheAttributesThatPreserveThem() throws {
        let container = try ModelContainer(for: Reading.self, Alert.self, configurations: ModelConfiguration(url: scratch.file("t.store")))
        let context = ModelContext(container)
        let reading = Reading(sensor: "boiler", value: 71)
        context.insert(reading)
        try context.save()
        let id = reading.persistentModelID
        context.delete(reading)
        try context.save()

        let deletion = try XCTUnwrap(context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        guard case .delete(let deleted as any HistoryDelete<Reading>)? = deletion.changes.first else {
            return XCTFail("the last transaction deleted the reading: \(deletion.changes)")
        }
        XCTAssertEqual(deleted.changedPersistentIdentifier, id)
        XCTAssertTrue(deleted.changedModelType == Reading.self)
        XCTAssertEqual(deleted.tombstone[\.sensor] as? String, "boiler")
        XCTAssertNil(deleted.tombstone[\.value], "value does not preserve itself")
        XCTAssertEqual(deleted.tombstone.map(\.keyPath), [\Reading.sensor])
    }

    func testATokenOlderThanTheDeletedHistoryHasExpired() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: scratch.file("e.store")))
        let context = ModelContext(container)
        for name in ["a", "b", "c"] {
            context.insert(Trip(name: name, destination: "x"))
            try context.save()
        }
        let all = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        XCTAssertEqual(all.count, 3)
        let first = all[0].token
        let second = all[1].token
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= second }))
        XCTAssertEqual(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token), [all[2].token])
        XCTAssertThrowsError(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > first }))) { error in
            XCTAssertEqual(error as? SwiftDataError, .historyTokenExpired)
        }
        XCTAssertEqual(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > second })).count, 1)
    }
}
