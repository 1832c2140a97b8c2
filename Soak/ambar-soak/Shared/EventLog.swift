import Foundation

/// One soak process incarnation's record, one line per event, each written with a single
/// `write(2)` on an `O_APPEND` descriptor, so a SIGKILL loses at most the event in flight and
/// never leaves half a line before the next one.
///
/// Lines: `instance <id>` (the process instance), `start <merged-through> <ns>`,
/// `m <token> <ns> <instance>` (a remote transaction, of that process instance, merged into the
/// main context), `x <token>` (history expired), `f <kind>` (a failed save), `stopped <saves>`,
/// `registered <objects in the main context>`, `rejected <hub messages that disagreed with the
/// ledger>` and `digest <head> <count> <hash>`. Times are CLOCK_REALTIME nanoseconds.
final class EventLog: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }

    deinit { close(descriptor) }

    /// Now, in CLOCK_REALTIME nanoseconds (comparable across processes on one host).
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
