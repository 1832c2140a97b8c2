import Foundation

/// The processes that have a replaced store open, read from /proc (all of them for root, this
/// user's otherwise).
enum ReplacedStoreHolders {
    /// Waits up to `seconds` for no process to have `file` (or its sidecars) open; returns those
    /// that still do.
    static func waitForRelease(of file: URL, seconds: Double) -> [Int32] {
        let deadline = Date().addingTimeInterval(seconds)
        var holders = current(file)
        while !holders.isEmpty && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)  // polling /proc, bounded by the deadline
            holders = current(file)
        }
        return holders
    }

    private static func current(_ file: URL) -> [Int32] {
        let targets = Set(["", "-wal", "-shm"].map { file.path + $0 })
        let fileManager = FileManager.default
        // try?: without /proc no holder can be named: the message then names none
        guard let entries = try? fileManager.contentsOfDirectory(atPath: "/proc") else { return [] }
        var result: [Int32] = []
        for entry in entries {
            // try?: processes that ended meanwhile, or are not ours to read, are skipped
            guard let pid = Int32(entry), pid != getpid(), let fds = try? fileManager.contentsOfDirectory(atPath: "/proc/\(entry)/fd") else { continue }
            for fd in fds {
                // try?: as above, for a descriptor closed meanwhile
                if let target = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)"), targets.contains(target) {
                    result.append(pid)
                    break
                }
            }
        }
        return result.sorted()
    }
}
