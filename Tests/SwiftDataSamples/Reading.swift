// Models shared by the SwiftData tests and the peer process they start, written as a SwiftData
// package's public models are: only the import line differs from an Apple-platform project.
import Foundation

#if canImport(SwiftData)
    import SwiftData
#else
    import AmbarSwiftData
#endif

/// A sensor's reading.
@Model
public final class Reading {
    #Unique<Reading>([\.sensor])

    /// The sensor's name (kept in the history when the reading is deleted).
    @Attribute(.preserveValueOnDeletion) public var sensor: String
    /// The value read.
    public var value: Double
    /// When it was read.
    public var takenAt: Date

    /// A reading of `sensor`.
    public init(sensor: String, value: Double, takenAt: Date = .now) {
        self.sensor = sensor
        self.value = value
        self.takenAt = takenAt
    }
}
