// swift-format-ignore-file: AlwaysUseLowerCamelCase

// (the sample's first versions name their dates start_date and end_date, as the session does)
// Three versions of a model and the plan between them, as WWDC23's "Model your schema with
// SwiftData" writes them: only the import line differs from an Apple-platform project.
import Foundation

#if canImport(SwiftData)
    import SwiftData
#else
    import AmbarSwiftData
#endif

enum SampleTripsSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }

    @Model
    final class Trip {
        var name: String
        var destination: String
        var start_date: Date
        var end_date: Date

        init(name: String, destination: String, start_date: Date, end_date: Date) {
            self.name = name
            self.destination = destination
            self.start_date = start_date
            self.end_date = end_date
        }
    }
}

enum SampleTripsSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }

    @Model
    final class Trip {
        @Attribute(.unique) var name: String
        var destination: String
        var start_date: Date
        var end_date: Date

        init(name: String, destination: String, start_date: Date, end_date: Date) {
            self.name = name
            self.destination = destination
            self.start_date = start_date
            self.end_date = end_date
        }
    }
}

enum SampleTripsSchemaV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }

    @Model
    final class Trip {
        @Attribute(.unique) var name: String
        var destination: String
        @Attribute(originalName: "start_date") var startDate: Date
        @Attribute(originalName: "end_date") var endDate: Date
        var lengthInDays: Int?

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }
}

typealias SampleTrip = SampleTripsSchemaV3.Trip

/// The stages' calls, in order, for the tests to check.
let sampleTripsMigrationCalls = Locked<[String]>([])

enum SampleTripsMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self, SampleTripsSchemaV3.self]
    }

    static var stages: [MigrationStage] {
        [migrateV1toV2, migrateV2toV3]
    }

    /// Names become unique: the duplicates go first (the earliest trip of a name stays).
    static let migrateV1toV2 = MigrationStage.custom(
        fromVersion: SampleTripsSchemaV1.self,
        toVersion: SampleTripsSchemaV2.self,
        willMigrate: { context in
            sampleTripsMigrationCalls.set(sampleTripsMigrationCalls.value + ["willMigrate 1→2"])
            let trips = try context.fetch(FetchDescriptor<SampleTripsSchemaV1.Trip>(sortBy: [SortDescriptor(\.start_date)]))
            var seen = Set<String>()
            for trip in trips where !seen.insert(trip.name).inserted {
                context.delete(trip)
            }
            try context.save()
        },
        didMigrate: nil
    )

    /// Dates are renamed; the new length is computed from them.
    static let migrateV2toV3 = MigrationStage.custom(
        fromVersion: SampleTripsSchemaV2.self,
        toVersion: SampleTripsSchemaV3.self,
        willMigrate: nil,
        didMigrate: { context in
            sampleTripsMigrationCalls.set(sampleTripsMigrationCalls.value + ["didMigrate 2→3"])
            for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV3.Trip>()) {
                trip.lengthInDays = Calendar(identifier: .gregorian).dateComponents([.day], from: trip.startDate, to: trip.endDate).day
            }
        }
    )
}
