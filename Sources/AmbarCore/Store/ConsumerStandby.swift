import Foundation

/// A copy of a durable consumer standing by, as the store records it: it found the consumer held
/// by another copy at its last check, and says so again at each check until it takes over or
/// stops. The record lapses with its lease when the copy is gone without a word (killed).
///
/// ```swift
/// for standby in try coordinator.consumerStandbys() where standby.expires > Date() {
///     print("\(standby.consumer): \(standby.owner) stands by")
/// }
/// ```
public struct ConsumerStandby: Sendable, Hashable {
    /// The consumer's name.
    public let consumer: String
    /// The process standing by.
    public let owner: ConsumerOwner
    /// When the record lapses unless the copy checks again first (the store's clock: the
    /// server's on PostgreSQL).
    public let expires: Date

    /// A standby record (the store makes them; tests may too).
    public init(consumer: String, owner: ConsumerOwner, expires: Date) {
        self.consumer = consumer
        self.owner = owner
        self.expires = expires
    }
}
