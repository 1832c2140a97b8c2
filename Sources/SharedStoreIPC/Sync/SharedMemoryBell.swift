import AmbarCore
import AmbarDataStack
import CSharedBell
import Foundation
import Logging
import Synchronization

/// The doorbell without hops: one page of a file in the shared directory, mapped by every process
/// that shares the store. A process that commits raises the page's token and wakes the others
/// itself, from the committing thread, with a futex; each receiver's waiting thread wakes and reads
/// the ledger. No event loop, no hub and no connection thread stand between the two.
///
/// It is only a doorbell, like the hub's frames: the token it carries makes a receiver read the
/// ledger, and nothing else. A forged ring (anyone who can write the file) costs a ledger read that
/// finds nothing new. A process that cannot map the file, or maps another one (a file replaced
/// meanwhile), gets the hub's frames: the hub leaves a save to the bell only for processes whose
/// `hello` says they hear the bell its sender rings (``use``). A ring that fails is caught by the
/// periodic ledger check.
///
/// The waiting thread runs in the batch scheduling class, so that a ring does not preempt the
/// committing thread of another process on a busy core.
///
/// The layout (little-endian, 4096 bytes, the rest zero): the magic `AMBRBELL` (8 bytes), the
/// layout (`UInt32`, 1), the sequence (`UInt32`, incremented by every ring: the futex word), the
/// newest token rung (`Int64`, only raised).
final class SharedMemoryBell: @unchecked Sendable {
    /// Why the bell cannot be used; sharing then goes on through the hub alone.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The file's size: one page.
    static let size = 4096
    /// How long a waiting thread sleeps before it looks whether it was stopped.
    static let waitSlice: Duration = .milliseconds(500)
    static let logger = Logger(label: "ambar.sync.bell")

    let path: String
    /// Whether this process can ring (it mapped the file for writing); a read-only mapping only
    /// waits.
    let canRing: Bool
    private let page: UnsafeMutableRawPointer
    private let identity: FileIdentity
    private let stopped = Atomic<Bool>(false)
    private let waiting = Atomic<Bool>(false)
    /// Whether a ring failed: the process no longer rings.
    private let ringFailed = Atomic<Bool>(false)
    /// Whether the waiting thread runs (started, and waiting has not failed).
    private let hearing = Atomic<Bool>(false)
    private let received = Atomic<Int>(0)
    private let foundAtTimeout = Atomic<Int>(0)

    /// The bell of the store `storeUUID` in the shared directory `directory`:
    /// `<directory>/.ambar/bell-<store UUID>`.
    static func path(in directory: URL, storeUUID: UUID) -> String {
        directory.appendingPathComponent(".ambar/bell-\(storeUUID.uuidString)").path
    }

    /// Opens (creating it when missing) and maps the bell at `path`.
    ///
    /// - Parameters:
    ///   - path: The bell's file, `<shared directory>/.ambar/bell-<store UUID>`.
    ///   - makingDirectories: Whether the folders above the file may be made, all of them (the
    ///     first mapping, when sharing starts). Otherwise (a bell mapped again while sharing
    ///     runs) only the file's own folder is made, inside a shared directory that still
    ///     exists: a shared directory removed under a running process is not made again.
    /// - Throws: ``Unavailable`` when the file cannot be created, opened or mapped, or holds
    ///   something other than a bell, or when the shared directory is gone and
    ///   `makingDirectories` is false.
    init(path: String, makingDirectories: Bool) throws(Unavailable) {
        self.path = path
        let parent = (path as NSString).deletingLastPathComponent
        if makingDirectories {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw Unavailable(description: "cannot create \(parent): \(error.localizedDescription)")
            }
        } else {
            do throws(FolderRemaking.Refused) {
                try FolderRemaking.remake(parent)
            } catch {
                throw Unavailable(description: error.description)
            }
        }
        // The process that creates the file makes it writable by the store's group, whatever its
        // umask (as the hub's socket is): every process of the store rings it.
        var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o660)
        if fd >= 0 {
            _ = fchmod(fd, 0o660)
        } else if errno == EEXIST {
            fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        }
        var writable = true
        if fd < 0, errno == EACCES || errno == EROFS {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            writable = false
        }
        guard fd >= 0 else { throw Unavailable(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw Unavailable(description: "\(path) is not a regular file")
        }
        if info.st_size < Self.size {
            // A page beyond the end of the file cannot be touched (SIGBUS): grow it first.
            guard writable, ftruncate(fd, off_t(Self.size)) == 0 else {
                throw Unavailable(description: "\(path) is shorter than a page and cannot be grown: \(String(cString: strerror(errno)))")
            }
        }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let mapped = mmap(nil, Self.size, protection, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw Unavailable(description: "cannot map \(path): \(String(cString: strerror(errno)))")
        }
        if writable {
            guard ambar_bell_claim(mapped) == 1 else {
                munmap(mapped, Self.size)
                throw Unavailable(description: "\(path) holds something other than an Ambar bell of layout \(AMBAR_BELL_LAYOUT)")
            }
        }
        self.page = mapped
        self.canRing = writable
        self.identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    deinit {
        munmap(page, Self.size)
    }

    /// Rings: ``raise(token:)``, then ``wake()`` (nothing, once a ring failed). Returns false when
    /// this ring's wake failed (see ``wake()``).
    @discardableResult
    func ring(token: Int64) -> Bool {
        guard raise(token: token) else { return true }
        return wake()
    }

    /// A ring's first half: raises the token to `token` and moves the sequence, waking no one. A
    /// process whose bell thread is about to wait sees the ring at once; a sleeping one waits for
    /// ``wake()``. Returns whether a wake must follow: false when this process does not ring (the
    /// bell was opened read-only, or a ring failed before).
    func raise(token: Int64) -> Bool {
        guard canRing, !ringFailed.load(ordering: .relaxed) else { return false }
        ambar_bell_raise(page, token)
        return true
    }

    /// A ring's second half: wakes every process waiting on the bell (one system call, whose cost
    /// grows with the number of processes woken). Returns false when the wake failed: the process
    /// then no longer says it rings (``use``), so that once it has told the hub (a new `hello`),
    /// the hub relays its frames to every process; the processes the failed wake did not reach
    /// find the transaction at their next ledger check.
    func wake() -> Bool {
        let error = ambar_bell_wake(page)
        guard error != 0 else { return true }
        ringFailed.store(true, ordering: .releasing)
        Self.logger.error(
            "waking the processes on the bell failed: \(String(cString: strerror(error))); this process's commits reach the others through the hub from now on, this one at their next ledger check"
        )
        return false
    }

    /// Starts a thread that waits on the bell and calls `onRing` with the newest token rung, each
    /// time the sequence moves, until ``stop()``. If waiting fails, the thread ends, the process
    /// no longer hears the bell (``use``), and `onFailure` is called.
    func startWaiting(onRing: @escaping @Sendable (Int64) -> Void, onFailure: @escaping @Sendable () -> Void = {}) {
        guard !waiting.exchange(true, ordering: .acquiringAndReleasing) else { return }
        hearing.store(true, ordering: .releasing)
        let slice = Int64(Self.waitSlice.components.seconds) * 1_000_000_000 + Int64(Self.waitSlice.components.attoseconds / 1_000_000_000)
        let thread = Thread { [self] in
            let scheduling = ambar_bell_thread_defers_to_running()
            if scheduling != 0 {
                // It still wakes on every ring; only a committing thread may be preempted by it.
                Self.logger.notice(
                    "the bell's thread could not take the batch scheduling class (\(String(cString: strerror(scheduling)))); its wake-ups may preempt a committing thread"
                )
            }
            var seen = ambar_bell_sequence(page)
            while !stopped.load(ordering: .acquiring) {
                let result = ambar_bell_wait(page, seen, slice)
                if result != 0 && result != ETIMEDOUT && result != EINTR {
                    Self.logger.error("waiting on the bell failed: \(String(cString: strerror(result))); the hub's frames ring instead")
                    hearing.store(false, ordering: .releasing)
                    onFailure()
                    return
                }
                let now = ambar_bell_sequence(page)
                guard now != seen, !stopped.load(ordering: .acquiring) else { continue }
                seen = now
                received.add(1, ordering: .relaxed)
                if result == ETIMEDOUT { foundAtTimeout.add(1, ordering: .relaxed) }
                onRing(ambar_bell_token(page))
            }
        }
        thread.name = "ambar-bell"
        thread.start()
    }

    /// Stops the waiting thread (within ``waitSlice``).
    func stop() {
        stopped.store(true, ordering: .releasing)
        hearing.store(false, ordering: .releasing)
    }

    /// How this process uses the bell, as its hub `hello` says: the file, whether it rings, and
    /// whether its waiting thread hears it.
    var use: Frame.BellUse {
        Frame.BellUse(
            device: identity.device, inode: identity.inode, rings: canRing && !ringFailed.load(ordering: .acquiring), hears: hearing.load(ordering: .acquiring))
    }

    /// How many rings the waiting thread saw.
    var ringsReceived: Int { received.load(ordering: .relaxed) }

    /// How many of those rings no wake reached: the waiting thread found the sequence moved when
    /// its wait slice ran out (a ringer that raised the bell and did not wake it, or a ring in the
    /// moment between the slice's end and the look).
    var ringsFoundAtTimeout: Int { foundAtTimeout.load(ordering: .relaxed) }

    /// Whether the file at ``path`` is still the one mapped (not removed or replaced since).
    var isStillAtPath: Bool {
        FileIdentity(path: path) == identity
    }
}
