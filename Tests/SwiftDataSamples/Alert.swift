import Foundation

#if canImport(SwiftData)
    import SwiftData
#else
    import AmbarSwiftData
#endif

/// An alert a consumer raised for a reading above its threshold.
@Model
public final class Alert {
    /// The reading's sensor.
    public var sensor: String
    /// The reading's value.
    public var value: Double
    /// The history transaction that inserted the reading.
    public var token: Int64

    /// An alert about `sensor`.
    public init(sensor: String, value: Double, token: Int64) {
        self.sensor = sensor
        self.value = value
        self.token = token
    }
}
