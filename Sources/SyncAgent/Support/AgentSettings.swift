import Foundation
import Logging

/// Settings a long-running command reads from its configuration file at start and again on
/// SIGHUP: `key = value` lines, `#` comments.
///
/// ```
/// log-level = debug      # trace, debug, info, notice, warning, error, critical
/// max-peers = 64         # hub: the most processes served at once
/// ```
struct AgentSettings: Equatable, Sendable {
    var logLevel: Logger.Level = .info
    var maximumPeers = 256

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
                    throw Invalid(file: file, line: index + 1, reason: "log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                settings.logLevel = level
            case "max-peers":
                guard let value = Int(parts[1]), value > 0 else { throw Invalid(file: file, line: index + 1, reason: "max-peers must be a positive integer") }
                settings.maximumPeers = value
            default:
                throw Invalid(file: file, line: index + 1, reason: "unknown setting \"\(parts[0])\" (known: log-level, max-peers)")
            }
        }
        return settings
    }
}
