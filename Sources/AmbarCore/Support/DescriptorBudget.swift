import Foundation

/// Whether the process can still open file descriptors: checked before work that needs several at
/// once and cannot fail gracefully when one is refused (SwiftNIO's event loops stop the process on
/// `EMFILE`), and to tell "too many open files" apart from other reasons a file does not open.
package enum DescriptorBudget {
    /// Throws ``AmbarError/tooManyOpenFiles(operation:limit:)`` unless `count` more descriptors can
    /// be opened now (they are opened on `/dev/null` and closed again at once).
    package static func require(_ count: Int, for operation: String) throws(AmbarError) {
        var opened: [Int32] = []
        defer { opened.forEach { close($0) } }
        for _ in 0..<count {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                if errno == EMFILE || errno == ENFILE { throw .tooManyOpenFiles(operation: operation, limit: limit) }
                return  // /dev/null missing or unreadable: nothing to tell from it
            }
            opened.append(fd)
        }
    }

    /// Whether fewer than `count` more descriptors can be opened now.
    package static func isShort(of count: Int) -> Bool {
        do throws(AmbarError) {
            try require(count, for: "")
            return false
        } catch {
            return true
        }
    }

    /// The process's soft limit on open descriptors (`RLIMIT_NOFILE`), or -1 when unknown.
    package static var limit: Int {
        var value = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &value) == 0 else { return -1 }
        return value.rlim_cur > rlim_t(Int.max) ? Int.max : Int(value.rlim_cur)  // RLIM_INFINITY is all ones
    }
}
