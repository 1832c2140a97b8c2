// Written as SwiftData code is: only the import line differs from an Apple-platform project.
import Foundation

#if canImport(SwiftData)
    import SwiftData
#else
    import AmbarSwiftData
#endif

@Model
final class Trip {
    #Unique<Trip>([\.name, \.startDate])
    #Index<Trip>([\.name], [\.startDate, \.endDate])

    var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    var status = Status.planned
    var budget: Decimal = 0
    var notes: String?
    var tags = [String]()
    var location: Coordinate?
    var kind: Kind = Kind.leisure(rating: 3)

    @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
    var bucketList = [BucketListItem]()

    @Relationship(deleteRule: .cascade)
    var livingAccommodation: LivingAccommodation?

    var companions: [Person]? = []

    @Transient var isSelected = false

    var displayName: String { "\(name) (\(destination))" }

    init(name: String, destination: String, startDate: Date = .now, endDate: Date = .distantFuture) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
    }

    enum Status: String, Codable, CaseIterable {
        case planned, underway, done
    }

    enum Kind: Codable, Equatable {
        case business(company: String)
        case leisure(rating: Int)
    }
}

struct Coordinate: Codable, Hashable {
    var latitude: Double
    var longitude: Double
}

@Model
final class BucketListItem {
    var title: String
    var details: String
    var hasReservation: Bool
    var isInPlan: Bool
    var trip: Trip?

    init(title: String, details: String, hasReservation: Bool, isInPlan: Bool) {
        self.title = title
        self.details = details
        self.hasReservation = hasReservation
        self.isInPlan = isInPlan
    }
}

@Model
final class LivingAccommodation {
    var address: String
    var placeName: String
    var trip: Trip?

    init(address: String, placeName: String) {
        self.address = address
        self.placeName = placeName
    }
}

@Model
public final class Person {
    @Attribute(.unique) public var email: String
    public var name: String
    public let joined: Date
    @Attribute(originalName: "phone") public var phoneNumber: String?
    var trips: [Trip]? = []

    public init(email: String, name: String, joined: Date = .now) {
        self.email = email
        self.name = name
        self.joined = joined
    }
}
