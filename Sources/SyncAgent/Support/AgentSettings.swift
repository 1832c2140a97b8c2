import AmbarCore
import AmbarDataStack
import Foundation
import Logging

/// Settings a long-running command reads from its configuration file at start and again on
/// SIGHUP: `key = value` lines, `#` comments.
///
/// ```
/// log-level = debug             # trace, debug, info, notice, warning, error, critical
/// max-peers = 64                # hub: the most processes served at once
/// history-retention = 86400     # seconds a ledger transaction is kept (hub, run)
/// consumer-lease = 86400        # seconds a silent consumer still holds history back (hub, run)
/// receipt-retention = 2592000   # seconds an idempotency receipt is kept (hub, run)
/// max-line-bytes = 1048576      # run: a longer import line is a line error
/// max-file-bytes = 268435456    # run: a larger inbox file is refused
/// ```
struct AgentSettings: Equatable, Sendable {
    var logLevel: Logger.Level = .info
    var maximumPeers = 256
    var retention = HistoryRetention.standard
    var maximumLineBytes = 1 << 20
    var maximumFileBytes = 256 << 20

    /// The limits an inbox worker applies.
    var inboxLimits: InboxWorker.Limits {
        InboxWorker.Limits(maximumLineBytes: maximumLineBytes, maximumFileBytes: maximumFileBytes)
    }

    static let keys = ["log-level", "max-peers", "history-retention", "consumer-lease", "receipt-retention", "max-line-bytes", "max-file-bytes"]

    /// What is wrong with a configuration file.
    struct Invalid: Error, CustomStringConvertible {
        let file: String
        let line: Int
        let reason: String
        var description: String { "\(file):\(line): \(reason)" }
    }

    /// The settings in `file`, starting from `defaults`; a missing file gives the defaults.
    static func load(_ file: String?, defaults: AgentSettings) throws -> AgentSettings {
        guard let file, FileManager.default.fileExists(atPath: file) else { return defaults }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        var settings = defaults
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else {
                throw Invalid(file: file, line: index + 1, reason: "expected `key = value`")
            }
            switch parts[0] {
            case "log-level":
                guard let level = Logger.Level(rawValue: parts[1]) else {
                    throw Invalid(
                        file: file, line: index + 1, reason: "log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                settings.logLevel = level
            case "max-peers":
                settings.maximumPeers = try positiveInteger(parts, file: file, line: index + 1)
            case "history-retention":
                settings.retention.history = try positiveSeconds(parts, file: file, line: index + 1)
            case "consumer-lease":
                settings.retention.consumerLease = try positiveSeconds(parts, file: file, line: index + 1)
            case "receipt-retention":
                settings.retention.receipts = try positiveSeconds(parts, file: file, line: index + 1)
            case "max-line-bytes":
                settings.maximumLineBytes = try positiveInteger(parts, file: file, line: index + 1)
            case "max-file-bytes":
                settings.maximumFileBytes = try positiveInteger(parts, file: file, line: index + 1)
            default:
                throw Invalid(file: file, line: index + 1, reason: "unknown setting \"\(parts[0])\" (known: \(keys.joined(separator: ", ")))")
            }
        }
        return settings
    }

    private static func positiveInteger(_ parts: [String], file: String, line: Int) throws -> Int {
        guard let value = Int(parts[1]), value > 0 else { throw Invalid(file: file, line: line, reason: "\(parts[0]) must be a positive integer") }
        return value
    }

    private static func positiveSeconds(_ parts: [String], file: String, line: Int) throws -> TimeInterval {
        guard let value = TimeInterval(parts[1]), value > 0, value.isFinite else {
            throw Invalid(file: file, line: line, reason: "\(parts[0]) must be a positive number of seconds")
        }
        return value
    }
}
