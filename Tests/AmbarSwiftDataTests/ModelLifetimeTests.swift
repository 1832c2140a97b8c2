import AmbarStack
import Foundation
import XCTest

@testable import AmbarSwiftData

/// How long models and contexts live: a context keeps the models it hands out (one instance per
/// stored object), a model does not keep its context, and models fetched through a context no one
/// keeps go on working.
final class ModelLifetimeTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    // XCTest keeps every test case object until the process ends: the directory goes here.
    override func tearDown() { scratch = nil }

    /// A container with one saved trip and its bucket list.
    private func containerWithATrip() throws -> ModelContainer {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: scratch.file("trips.store")))
        let context = ModelContext(container)
        let trip = Trip(name: "Ghent", destination: "Belgium")
        context.insert(trip)
        trip.bucketList.append(BucketListItem(title: "Gravensteen", details: "castle", hasReservation: false, isInPlan: true))
        try context.save()
        return container
    }

    func testModelsMadeByTheirInitializersKeepTheirOwnValuesUntilInserted() throws {
        let ghent = Trip(name: "Ghent", destination: "Belgium")
        let porto = Trip(name: "Porto", destination: "Portugal")
        let item = BucketListItem(title: "Ribeira", details: "", hasReservation: false, isInPlan: true)
        XCTAssertEqual([ghent.name, porto.name, item.title], ["Ghent", "Porto", "Ribeira"])
        XCTAssertFalse(ghent.persistentBackingData === porto.persistentBackingData)
        porto.destination = "Douro"
        XCTAssertEqual([ghent.destination, porto.destination], ["Belgium", "Douro"])
    }

    func testAContextKeepsTheModelsItHandsOut() throws {
        let context = ModelContext(try containerWithATrip())
        weak var fetched: Trip?
        do { fetched = try context.fetch(FetchDescriptor<Trip>()).first }
        let kept = try XCTUnwrap(fetched, "the context let go of a model it handed out")
        XCTAssertTrue(try context.fetch(FetchDescriptor<Trip>()).first === kept)
    }

    func testModelsFetchedThroughAContextNoOneKeepsGoOnWorking() throws {
        let container = try containerWithATrip()
        weak var released: ModelContext?
        let trips: [Trip] = try {
            let context = ModelContext(container)
            released = context
            return try context.fetch(FetchDescriptor<Trip>())
        }()
        XCTAssertNil(released, "a model kept its context")
        let trip = try XCTUnwrap(trips.first)
        XCTAssertEqual(trip.name, "Ghent")
        XCTAssertEqual(trip.bucketList.map(\.title), ["Gravensteen"])
        trip.destination = "Flanders"
        let context = try XCTUnwrap(trip.modelContext, "a model of a context no one keeps has no context to save it")
        XCTAssertTrue(context.hasChanges)
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.destination), ["Flanders"])
    }

    func testAContextThatGoesLetsGoOfTheModelsNoOneUses() throws {
        let container = try containerWithATrip()
        weak var model: Trip?
        var managedContext: ManagedObjectContext?
        do {
            let context = ModelContext(container)
            managedContext = context.managedContext
            model = try context.fetch(FetchDescriptor<Trip>()).first
            XCTAssertNotNil(model)
        }
        // The context lets go of its models on its Ambar context's queue: wait for that queue.
        try XCTUnwrap(managedContext).performAndWait {}
        managedContext = nil
        XCTAssertNil(model, "a model outlived its context with no one using it")
    }
}
