import CSystemd
import Foundation
import Logging

/// A swift-log handler that writes structured entries to journald over its native protocol
/// (sd_journal_sendv(3)).
///
/// Each entry carries `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE`,
/// `CODE_FUNC`, `AMBAR_LOGGER` (the logger's label) and one `AMBAR_*` field per metadata key (see
/// ``JournalField``), so `journalctl AMBAR_PEER=1234` finds the lines about a peer.
public struct JournalLogHandler: LogHandler {
    /// The identifier entries are filed under (`journalctl -t`).
    public let identifier: String
    /// The logger's label.
    public let label: String
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private var localLevel: Logger.Level?
    private let levelControl: LogLevelControl

    /// A handler for the logger `label`, filing entries under `identifier`.
    public init(label: String, identifier: String, levelControl: LogLevelControl = .shared) {
        self.label = label
        self.identifier = identifier
        self.levelControl = levelControl
    }

    public var logLevel: Logger.Level {
        get { localLevel ?? levelControl.level }
        set { localLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
            "AMBAR_LOGGER=\(label)",
        ]
        for (key, value) in entryMetadata(event) {
            fields.append("\(JournalField.name(forMetadataKey: key))=\(value)")
        }
        Self.send(fields)
    }

    /// The syslog priority of a swift-log level.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Sends one entry made of `KEY=value` fields; returns whether journald accepted it.
    @discardableResult
    public static func send(_ fields: [String]) -> Bool {
        // One contiguous buffer, with an iovec per field pointing into it.
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = buffer.count
            buffer.append(contentsOf: field.utf8)
            ranges.append(start..<buffer.count)
        }
        return buffer.withUnsafeMutableBytes { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            var vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count)) == 0
        }
    }
}
