import Foundation
import Synchronization

/// Identifies a context without holding it; `Sendable`, so notifications can carry it.
public struct ContextIdentifier: Sendable, Hashable, CustomStringConvertible {
    let raw: UInt64
    private static let counter = Atomic<UInt64>(0)
    static func next() -> ContextIdentifier { ContextIdentifier(raw: counter.add(1, ordering: .relaxed).newValue) }
    public var description: String { "context#\(raw)" }
}
