import AmbarSwiftData
import Foundation
import XCTest

/// SwiftData's model and data code, run on Ambar: insert, save, fetch, relationships, deletes.
final class ModelContextTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        scratch = nil
    }

    private func container(_ name: String = "trips.store") throws -> ModelContainer {
        try ModelContainer(for: Trip.self, Task.self, configurations: ModelConfiguration(url: scratch.file(name)))
    }

    func testInsertedModelsAreSavedAndFetchedBackWithEveryKindOfValue() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let context = ModelContext(try container())
            let trip = Trip(name: "Lisbon", destination: "Portugal", startDate: start)
            trip.status = .underway
            trip.budget = Decimal(string: "1234.56")!
            trip.tags = ["food", "tiles"]
            trip.location = Coordinate(latitude: 38.7, longitude: -9.1)
            trip.kind = .business(company: "Acme")
            XCTAssertNil(trip.modelContext)
            context.insert(trip)
            XCTAssertTrue(context.hasChanges)
            XCTAssertTrue(trip.modelContext === context)
            try context.save()
            XCTAssertFalse(context.hasChanges)
            XCTAssertFalse(trip.hasChanges)
        }
        // A new container on the same file: everything comes back from the store.
        let context = ModelContext(try container())
        let trips = try context.fetch(FetchDescriptor<Trip>())
        XCTAssertEqual(trips.count, 1)
        let trip = try XCTUnwrap(trips.first)
        XCTAssertEqual(trip.name, "Lisbon")
        XCTAssertEqual(trip.startDate, start)
        XCTAssertEqual(trip.status, .underway)
        XCTAssertEqual(trip.budget, Decimal(string: "1234.56"))
        XCTAssertNil(trip.notes)
        XCTAssertEqual(trip.tags, ["food", "tiles"])
        XCTAssertEqual(trip.location, Coordinate(latitude: 38.7, longitude: -9.1))
        XCTAssertEqual(trip.kind, .business(company: "Acme"))
        XCTAssertFalse(trip.isSelected)
        XCTAssertEqual(trip.displayName, "Lisbon (Portugal)")
        XCTAssertEqual(trip.persistentModelID.entityName, "Trip")
    }

    func testRelationshipsInsertTheirModelsAndInversesAreInferred() throws {
        let context = ModelContext(try container())
        let trip = Trip(name: "Kyoto", destination: "Japan")
        let item = BucketListItem(title: "Fushimi Inari", details: "early", hasReservation: false, isInPlan: true)
        trip.bucketList.append(item)  // before insertion
        trip.livingAccommodation = LivingAccommodation(address: "Gion", placeName: "Ryokan")
        context.insert(trip)
        let guest = Person(email: "ana@example.com", name: "Ana")
        trip.companions?.append(guest)  // after insertion: inserted with it
        try context.save()

        XCTAssertTrue(item.modelContext === context)
        XCTAssertTrue(item.trip === trip, "the inverse the @Relationship names")
        XCTAssertTrue(trip.livingAccommodation?.trip === trip, "an inverse inferred (no @Relationship on either side)")
        XCTAssertEqual(guest.trips?.map(\.name), ["Kyoto"], "a many-to-many inverse inferred")

        let other = ModelContext(context.container)
        let fetched = try XCTUnwrap(other.fetch(FetchDescriptor<Trip>()).first)
        XCTAssertEqual(fetched.bucketList.map(\.title), ["Fushimi Inari"])
        XCTAssertEqual(fetched.livingAccommodation?.placeName, "Ryokan")
        XCTAssertEqual(fetched.companions?.map(\.email), ["ana@example.com"])
        XCTAssertTrue(fetched.bucketList.first?.trip === fetched, "one model per stored object in a context")
    }

    func testPredicatesSortsLimitsAndCounts() throws {
        let context = ModelContext(try container())
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        for (i, name) in ["Écija", "Lisbon", "Lyon", "Porto", "Seville"].enumerated() {
            let trip = Trip(name: name, destination: i < 2 ? "Iberia" : "Elsewhere", startDate: base.addingTimeInterval(Double(i) * 86_400))
            trip.status = i.isMultiple(of: 2) ? .planned : .done
            trip.notes = i == 3 ? "with friends" : nil
            context.insert(trip)
        }
        try context.save()

        let after = base.addingTimeInterval(86_400)
        let search = "ECI"
        let planned = Trip.Status.planned
        XCTAssertEqual(
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate > after }, sortBy: [SortDescriptor(\.name)])).map(\.name),
            ["Lyon", "Porto", "Seville"])
        XCTAssertEqual(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.localizedStandardContains(search) })).map(\.name), ["Écija"])
        XCTAssertEqual(
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.status == planned }, sortBy: [SortDescriptor(\.name, order: .reverse)])).map(
                \.name), ["Écija", "Seville", "Lyon"], "strings sort by their Unicode scalars")
        XCTAssertEqual(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.notes != nil })).map(\.name), ["Porto"])
        XCTAssertEqual(
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.starts(with: "L") && $0.destination == "Iberia" })).map(\.name), ["Lisbon"])

        var page = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)])
        page.fetchOffset = 1
        page.fetchLimit = 2
        XCTAssertEqual(try context.fetch(page).map(\.name), ["Lisbon", "Lyon"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Elsewhere" })), 3)
        XCTAssertEqual(try context.fetchIdentifiers(FetchDescriptor<Trip>()).count, 5)

        var names: [String] = []
        try context.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), batchSize: 2) { names.append($0.name) }
        XCTAssertEqual(names, ["Lisbon", "Lyon", "Porto", "Seville", "Écija"])
    }

    func testAPredicateWithoutAStoreEquivalentThrowsAnErrorNamingIt() throws {
        let context = ModelContext(try container())
        XCTAssertThrowsError(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.displayName == "x" }))) { error in
            XCTAssertEqual(error as? SwiftDataError, .unsupportedPredicate)
            XCTAssertTrue("\(error)".contains("not a stored property of the model Trip"), "\(error)")
        }
    }

    func testDeletesCascadeAtSaveAndRollbackRestores() throws {
        let context = ModelContext(try container())
        let trip = Trip(name: "Oslo", destination: "Norway")
        trip.bucketList = [BucketListItem(title: "Fjord", details: "", hasReservation: true, isInPlan: true)]
        context.insert(trip)
        try context.save()

        trip.name = "Bergen"
        XCTAssertTrue(trip.hasChanges)
        context.rollback()
        XCTAssertEqual(trip.name, "Oslo")

        context.delete(trip)
        XCTAssertTrue(trip.isDeleted)
        XCTAssertTrue(context.deletedModelsArray.contains { $0 as? Trip === trip })
        try context.save()
        XCTAssertNil(trip.modelContext, "a deleted model leaves its context when the deletion is saved")
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<BucketListItem>()), 0, "the cascade deleted the item")

        context.insert(Trip(name: "A", destination: "x"))
        context.insert(Trip(name: "B", destination: "y"))
        try context.save()
        try context.delete(model: Trip.self, where: #Predicate { $0.destination == "x" })
        try context.save()
        XCTAssertEqual(try context.fetch(FetchDescriptor<Trip>()).map(\.name), ["B"])
    }

    func testAUniqueAttributeUpsertsAsSwiftDataDoes() throws {
        let context = ModelContext(try container())
        context.insert(Person(email: "bo@example.com", name: "Bo"))
        try context.save()
        context.insert(Person(email: "bo@example.com", name: "Bo Jensen"))
        try context.save()
        let people = try context.fetch(FetchDescriptor<Person>())
        XCTAssertEqual(people.map(\.name), ["Bo Jensen"])
    }

    func testPersistedLetsAndModelsNamedLikeSwiftTypes() throws {
        let joined = Date(timeIntervalSince1970: 1_600_000_000)
        do {
            let context = ModelContext(try container())
            context.insert(Person(email: "cy@example.com", name: "Cy", joined: joined))
            let group = Group(name: "Chores")
            group.tasks = [Task(title: "Dishes"), Task(title: "Laundry")]
            context.insert(group)
            try context.save()
        }
        let context = ModelContext(try container())
        XCTAssertEqual(try context.fetch(FetchDescriptor<Person>()).first?.joined, joined)
        let tasks = try context.fetch(FetchDescriptor<Task>(sortBy: [SortDescriptor(\.title)]))
        XCTAssertEqual(tasks.map(\.title), ["Dishes", "Laundry"])
        XCTAssertEqual(tasks.first?.group?.name, "Chores")
    }

    func testObservationSeesReadsAndWrites() throws {
        let context = ModelContext(try container())
        let trip = Trip(name: "Rome", destination: "Italy")
        context.insert(trip)
        let changed = Locked(false)
        withObservationTracking {
            _ = trip.name
        } onChange: {
            changed.set(true)
        }
        trip.destination = "Lazio"
        XCTAssertFalse(changed.value, "a property not read is not tracked")
        trip.name = "Roma"
        XCTAssertTrue(changed.value)
    }

    func testSavesPostWillSaveAndDidSaveWithTheIdentifiers() throws {
        let context = ModelContext(try container())
        let trip = Trip(name: "Nice", destination: "France")
        context.insert(trip)
        let inserted = Locked<[PersistentIdentifier]>([])
        let token = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { note in
            inserted.set(note.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] ?? [])
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try context.save()
        XCTAssertEqual(inserted.value, [trip.persistentModelID])
        let encoded = try JSONEncoder().encode(trip.persistentModelID)
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: encoded)
        XCTAssertTrue(ModelContext(context.container).model(for: decoded) is Trip)
    }

    func testAModelActorImportsOnItsOwnContext() async throws {
        let container = try container()
        let importer = TripImporter(modelContainer: container)
        let count = try await importer.importTrips(["Ghent", "Bruges", "Antwerp"])
        XCTAssertEqual(count, 3)
        let names = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        XCTAssertEqual(names, ["Antwerp", "Bruges", "Ghent"])
    }
}

@ModelActor
actor TripImporter {
    func importTrips(_ names: [String]) throws -> Int {
        for name in names { modelContext.insert(Trip(name: name, destination: "Belgium")) }
        try modelContext.save()
        return try modelContext.fetchCount(FetchDescriptor<Trip>())
    }
}

/// A value shared with a callback.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}

/// The main context merges the saves of the container's other contexts, and Observation sees
/// the models it holds change.
final class MainContextTests: XCTestCase {
    @MainActor
    func testAnotherContextsSaveReachesTheMainContextAndItsObservers() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let main = container.mainContext
        XCTAssertTrue(main.autosaveEnabled)
        let trip = Trip(name: "Vienna", destination: "Austria")
        main.insert(trip)
        try main.save()

        let changed = expectation(description: "Observation saw the merged name")
        withObservationTracking {
            _ = trip.name
        } onChange: {
            changed.fulfill()
        }
        let background = ModelContext(container)
        let id = trip.persistentModelID
        let theirs = try XCTUnwrap(background.model(for: id) as? Trip)
        theirs.name = "Wien"
        try background.save()
        await fulfillment(of: [changed], timeout: 10)
        XCTAssertEqual(trip.name, "Wien")
    }
}

/// Identifiers that resolve to no stored model give no model of the class, and say so.
final class UnresolvedIdentifierTests: XCTestCase {
    func testTheIdentifierOfADeletedModelGivesNoModelAndTheNextSaveSaysWhy() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let trip = Trip(name: "Gone", destination: "nowhere")
        context.insert(trip)
        try context.save()
        let id = trip.persistentModelID
        context.delete(trip)
        try context.save()

        let other = ModelContext(container)
        XCTAssertNil(other.model(for: id) as? Trip)
        XCTAssertThrowsError(try other.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveFailed)
        }
        XCTAssertNoThrow(try other.save(), "the failure was thrown once")
    }
}
