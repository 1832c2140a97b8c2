import AmbarCore
import AmbarDataStack
import CoreMetrics

/// An inbox's work as metrics, labelled with the agent's name (`agent`): files imported and
/// failed, files waiting in the inbox, and whether one waits for the store to take it again
/// (`ambar_inbox_retrying`, 1 with the `reason` the store gave — the error's kind — else 0).
struct InboxMetrics: Sendable {
    let imported: Counter
    let objects: Counter
    let failed: Counter
    let waiting: Gauge
    private let agent: String
    private let lastReason = Locked<String?>(nil)

    init(agent: String) {
        self.agent = agent
        let dimensions = [("agent", agent)]
        imported = Counter(label: "ambar_inbox_files_imported_total", dimensions: dimensions)
        objects = Counter(label: "ambar_inbox_objects_imported_total", dimensions: dimensions)
        failed = Counter(label: "ambar_inbox_files_failed_total", dimensions: dimensions)
        waiting = Gauge(label: "ambar_inbox_files_waiting", dimensions: dimensions)
    }

    /// A file waits for the store because of `error` (nil: nothing waits any more).
    func retrying(because error: (any Error)?) {
        let reason = error.map(Self.kind)
        let previous = lastReason.withLock { last -> String? in
            defer { last = reason }
            return last
        }
        if let previous, previous != reason { gauge(previous).record(0) }
        if let reason { gauge(reason).record(1) }
    }

    private func gauge(_ reason: String) -> Gauge {
        Gauge(label: "ambar_inbox_retrying", dimensions: [("agent", agent), ("reason", reason)])
    }

    /// The kind of an error: its enum case's name (`storeBusy`), or its type's.
    static func kind(_ error: any Error) -> String {
        let text = String(describing: error)
        if let open = text.firstIndex(of: "("), !text[..<open].isEmpty, text[..<open].allSatisfy({ $0.isLetter || $0.isNumber }) {
            return String(text[..<open])
        }
        return text.allSatisfy({ $0.isLetter || $0.isNumber }) && !text.isEmpty ? text : String(describing: type(of: error))
    }
}
