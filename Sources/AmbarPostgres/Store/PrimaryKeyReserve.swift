import AmbarCore
import AmbarSQL
import Foundation

/// Primary keys taken from a root table's sequence ahead of need, so that most saves take theirs
/// without a round trip of their own.
///
/// A sequence is not transactional: a key it handed out is never handed out again, whether the
/// transaction that asked commits or not, and rows written outside Ambar take theirs from the same
/// sequence (the column's default). Keys held here are therefore never taken by anyone else; those
/// still held when the process ends are simply never used (gaps, as Core Data's keys have).
final class PrimaryKeyReserve: Sendable {
    /// Keys taken beyond a save's need when the reserve runs dry.
    static let batch = 32
    private let held = Locked<[String: ArraySlice<Int64>]>([:])

    /// `count` keys of `root`: from the reserve, and from `take(n)` (which takes `n` keys from
    /// the sequence) when it runs dry, refilling it.
    func keys(root: String, count: Int, take: (Int) throws -> [Int64]) throws -> [Int64] {
        if let ready = held.withLock({ held -> [Int64]? in
            guard let keys = held[root], keys.count >= count else { return nil }
            held[root] = keys.dropFirst(count)
            return Array(keys.prefix(count))
        }) {
            return ready
        }
        let fresh = try take(count + Self.batch)
        guard fresh.count >= count else { return fresh }
        held.withLock { held in held[root, default: []].append(contentsOf: fresh[count...]) }
        return Array(fresh.prefix(count))
    }
}
