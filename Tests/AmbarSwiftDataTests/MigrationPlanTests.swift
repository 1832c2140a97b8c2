import AmbarSwiftData
import Foundation
import XCTest

/// A migration plan of three versions, as SwiftData apps write one: a store of the first version
/// is taken through each stage, its code run around each lightweight migration.
final class MigrationPlanTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private let calendar = Calendar(identifier: .gregorian)

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
        sampleTripsMigrationCalls.set([])
    }

    override func tearDown() {
        scratch = nil
    }

    private var configuration: ModelConfiguration { ModelConfiguration(url: scratch.file("trips.store")) }

    private func day(_ month: Int, _ day: Int) throws -> Date {
        try XCTUnwrap(calendar.date(from: DateComponents(timeZone: TimeZone(identifier: "UTC"), year: 2026, month: month, day: day)))
    }

    /// A store of the first version, with two trips named alike.
    private func makeFirstVersionStore() throws {
        let container = try ModelContainer(for: Schema(versionedSchema: SampleTripsSchemaV1.self), configurations: configuration)
        let context = ModelContext(container)
        context.insert(SampleTripsSchemaV1.Trip(name: "Lisbon", destination: "Portugal", start_date: try day(1, 1), end_date: try day(1, 5)))
        context.insert(SampleTripsSchemaV1.Trip(name: "Lisbon", destination: "Portugal", start_date: try day(2, 1), end_date: try day(2, 3)))
        context.insert(SampleTripsSchemaV1.Trip(name: "Kyoto", destination: "Japan", start_date: try day(3, 1), end_date: try day(3, 11)))
        try context.save()
    }

    func testAStoreOfTheFirstVersionIsTakenThroughEveryStage() throws {
        try makeFirstVersionStore()

        let container = try ModelContainer(for: SampleTrip.self, migrationPlan: SampleTripsMigrationPlan.self, configurations: configuration)
        XCTAssertEqual(sampleTripsMigrationCalls.value, ["willMigrate 1→2", "didMigrate 2→3"])
        let context = ModelContext(container)
        let trips = try context.fetch(FetchDescriptor<SampleTrip>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(trips.map(\.name), ["Kyoto", "Lisbon"])
        XCTAssertEqual(trips.map(\.startDate), [try day(3, 1), try day(1, 1)], "the renamed dates kept their values; the first Lisbon stayed")
        XCTAssertEqual(trips.map(\.lengthInDays), [10, 4])

        // Names are unique now: a second Kyoto updates the first.
        context.insert(SampleTrip(name: "Kyoto", destination: "Japan (Kansai)", startDate: try day(3, 1), endDate: try day(3, 11)))
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SampleTrip>()), 2)

        // At the last version already: opening again runs no stage.
        _ = try ModelContainer(for: SampleTrip.self, migrationPlan: SampleTripsMigrationPlan.self, configurations: configuration)
        XCTAssertEqual(sampleTripsMigrationCalls.value, ["willMigrate 1→2", "didMigrate 2→3"])
    }

    func testANewStoreIsMadeAtTheLastVersionWithoutRunningStages() throws {
        let container = try ModelContainer(for: SampleTrip.self, migrationPlan: SampleTripsMigrationPlan.self, configurations: configuration)
        XCTAssertEqual(sampleTripsMigrationCalls.value, [])
        let context = ModelContext(container)
        context.insert(SampleTrip(name: "Oslo", destination: "Norway", startDate: try day(5, 1), endDate: try day(5, 4)))
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SampleTrip>()), 1)
    }

    func testAStageWhoseCodeThrowsStopsTheMigrationAndSaysWhich() throws {
        try makeFirstVersionStore()
        XCTAssertThrowsError(try ModelContainer(for: SampleTrip.self, migrationPlan: RefusingPlan.self, configurations: configuration)) { error in
            let failure = error as? SwiftDataError
            XCTAssertEqual(failure?.code, .migrationFailed)
            XCTAssertTrue(failure?.message.contains("willMigrate") == true, "\(error)")
            XCTAssertTrue(failure?.message.contains("1.0.0 to 2.0.0") == true, "\(error)")
            XCTAssertTrue(failure?.cause is RefusingPlan.Refusal, "\(error)")
        }
        // The store stays at the first version, its data whole.
        let container = try ModelContainer(for: Schema(versionedSchema: SampleTripsSchemaV1.self), configurations: configuration)
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SampleTripsSchemaV1.Trip>()), 3)
    }
}

/// A plan whose first stage refuses to run.
private enum RefusingPlan: SchemaMigrationPlan {
    struct Refusal: Error {}

    static var schemas: [any VersionedSchema.Type] {
        [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self, SampleTripsSchemaV3.self]
    }

    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self, willMigrate: { _ in throw Refusal() }, didMigrate: nil),
            .lightweight(fromVersion: SampleTripsSchemaV2.self, toVersion: SampleTripsSchemaV3.self),
        ]
    }
}
