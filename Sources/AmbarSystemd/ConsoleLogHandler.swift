import Foundation
import Logging

/// A swift-log handler that writes one plain, readable line per entry to standard error:
/// `12:04:05.123 info ambar.sync.hub: hub serving socket=/run/ambar/hub.sock`.
public struct ConsoleLogHandler: LogHandler {
    /// The logger's label.
    public let label: String
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private var localLevel: Logger.Level?
    private let levelControl: LogLevelControl

    /// A handler for the logger `label`.
    public init(label: String, levelControl: LogLevelControl = .shared) {
        self.label = label
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
        let details = entryMetadata(event).map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
        let line = "\(time) \(event.level) \(label): \(event.message)\(details.isEmpty ? "" : " " + details)\n"
        // One write(2) per line, so lines of concurrent loggers never interleave.
        _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
    }
}
