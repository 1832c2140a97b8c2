import Foundation

/// What a PostgreSQL store says on its channel (`NOTIFY`) inside each saving transaction: the
/// ledger token, who saved, and the primary keys changed when they fit in a notification —
/// the token alone otherwise. Delivered at commit, in commit order, to every listener.
///
/// Like every doorbell it is only a hint: listeners read the ledger, and check what a notice
/// claims against the transaction the ledger holds under its token.
///
/// Text form (`a1` is the format's version), fields separated by one space:
/// `a1 <token> <instance, hex> <pid> [<entity>:<inserted>/<updated>/<deleted> …]`, each key list
/// comma-separated decimal; `a1 foreign` reports a write made outside Ambar.
package struct StoreChangeNotice: Sendable, Equatable {
    /// One entity's changed primary keys.
    package struct EntityKeys: Sendable, Equatable {
        package var inserted: [Int64] = []
        package var updated: [Int64] = []
        package var deleted: [Int64] = []

        package init(inserted: [Int64] = [], updated: [Int64] = [], deleted: [Int64] = []) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
        }
    }

    package var token: Int64
    package var instanceID: UInt64
    package var processID: Int32
    /// The keys by entity; `nil` when they did not fit (the token alone was sent).
    package var changes: [String: EntityKeys]?

    /// PostgreSQL refuses payloads of 8,000 bytes or more; a notice stays well below.
    package static let maximumPayload = 7_000

    package init(token: Int64, instanceID: UInt64, processID: Int32, changes: [String: EntityKeys]?) {
        self.token = token
        self.instanceID = instanceID
        self.processID = processID
        self.changes = changes
    }

    /// The text sent: with the keys when they fit in ``maximumPayload``, else the token alone.
    package var payload: String { "a1 \(token)" + payloadAfterToken }

    /// The payload's text after `a1 <token>` (beginning with a space), which a save sends with the
    /// token the server assigns: `'a1 ' || token || payloadAfterToken` in SQL.
    package var payloadAfterToken: String {
        // A token takes at most 19 digits: the size check counts them all.
        let limit = Self.maximumPayload - 22
        let head = " \(String(instanceID, radix: 16)) \(processID)"
        guard let changes else { return head }
        var text = head
        for entity in changes.keys.sorted() {
            guard let keys = changes[entity] else { continue }
            func list(_ pks: [Int64]) -> String { pks.map(String.init).joined(separator: ",") }
            text += " \(entity):\(list(keys.inserted))/\(list(keys.updated))/\(list(keys.deleted))"
            if text.utf8.count > limit { return head }
        }
        return text
    }

    /// The payload that reports a write made outside Ambar.
    package static let foreignWritePayload = "a1 foreign"

    /// Reads a payload; `nil` when it is not a notice of this format.
    package init?(payload: String) {
        let fields = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0] == "a1", let token = Int64(fields[1]), token > 0,
            let instance = UInt64(fields[2], radix: 16), let pid = Int32(fields[3])
        else { return nil }
        var changes: [String: EntityKeys]? = nil
        if fields.count > 4 {
            var parsed: [String: EntityKeys] = [:]
            for field in fields[4...] {
                guard let colon = field.lastIndex(of: ":") else { return nil }
                let lists = field[field.index(after: colon)...].split(separator: "/", omittingEmptySubsequences: false)
                guard lists.count == 3, colon > field.startIndex else { return nil }
                func keys(_ text: Substring) -> [Int64]? {
                    text.isEmpty
                        ? []
                        : text.split(separator: ",").map { Int64($0) }.allSatisfy({ $0 != nil }) ? text.split(separator: ",").compactMap { Int64($0) } : nil
                }
                guard let i = keys(lists[0]), let u = keys(lists[1]), let d = keys(lists[2]) else { return nil }
                parsed[String(field[..<colon])] = EntityKeys(inserted: i, updated: u, deleted: d)
            }
            changes = parsed
        }
        self.init(token: token, instanceID: instance, processID: pid, changes: changes)
    }

    /// The channel of the store with UUID `storeIdentifier`: one per store.
    package static func channel(storeIdentifier: String) -> String {
        "ambar_" + storeIdentifier.lowercased().filter { $0.isHexDigit }
    }
}
