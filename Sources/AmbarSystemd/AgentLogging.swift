import Foundation
import Logging

/// Chooses where the agent's logs go: journald's native protocol when standard error is the
/// journal (systemd sets `$JOURNAL_STREAM` to its device and inode), plain lines otherwise.
public enum AgentLogging {
    /// Whether standard error is connected to the journal (`$JOURNAL_STREAM` matches fstat(2)).
    public static var standardErrorIsJournal: Bool {
        guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// Bootstraps swift-log once for the process, at `level`, filing journal entries under
    /// `identifier`.
    public static func bootstrap(identifier: String, level: Logger.Level) {
        LogLevelControl.shared.level = level
        if standardErrorIsJournal {
            LoggingSystem.bootstrap { label in JournalLogHandler(label: label, identifier: identifier) }
        } else {
            LoggingSystem.bootstrap { label in ConsoleLogHandler(label: label) }
        }
    }
}
