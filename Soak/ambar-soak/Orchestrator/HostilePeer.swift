import Foundation
import ProcessHarness
import SharedStoreIPC

/// A peer of the same user, admitted by the hub, that lies: on its own thread, every 100 ms it
/// sends a forged did-save for the next token (naming deletions and updates the ledger will never
/// hold, under an instance no process has), replays a did-save it was relayed earlier, and rings
/// for a token far ahead. Processes must merge only what the ledger holds, each transaction
/// once. It reconnects whenever the hub goes (killed, or frozen and given up on).
final class HostilePeer: @unchecked Sendable {
    private let socketPath: String
    private let storeUUID: UUID
    private let instance = UInt64.random(in: 1...UInt64(Int64.max))
    private let lock = NSLock()
    private var stopping = false
    private var sent = 0
    private let finished = DispatchSemaphore(value: 0)

    init(root: URL, storeUUID: UUID) {
        socketPath = root.appendingPathComponent(".ambar/sync.sock").path
        self.storeUUID = storeUUID
    }

    func start() {
        Thread.detachNewThread { [self] in
            var peer: RawPeer?
            var relayed: [Frame] = []
            var newest: Int64 = 0
            while !locked({ stopping }) {
                Thread.sleep(forTimeInterval: 0.1)
                do {
                    if peer == nil { peer = try connect() }
                    guard let connected = peer else { continue }
                    // What the hub relayed since: kept for replays, and the newest token seen.
                    while let frame = try connected.readFrame(timeout: 0) {
                        if case .didSave(let save) = frame {
                            newest = max(newest, save.token)
                            relayed.append(frame)
                            if relayed.count > 64 { relayed.removeFirst() }
                        }
                    }
                    let forged = Frame.didSave(
                        .init(
                            storeUUID: storeUUID, token: newest + 1, processID: 4242, instanceID: instance, author: "forger",
                            changes: ["Item": .init(updated: [2, 4], deleted: [1, 3, 5])]))
                    var frames = [forged, .tokenOnly(storeUUID: storeUUID, token: newest + 1_000, processID: 4242, instanceID: instance)]
                    if let replay = relayed.randomElement() { frames.append(replay) }
                    for frame in frames { try connected.write(try WireFormat.encode(frame)) }
                    locked { sent += frames.count }
                } catch {
                    peer?.close()
                    peer = nil
                }
            }
            peer?.close()
            finished.signal()
        }
    }

    /// Stops; returns how many frames it sent.
    func stop() -> Int {
        locked { stopping = true }
        finished.wait()
        return locked { sent }
    }

    /// Connects and says hello; nil when no hub listens. Writes time out after a second, so a
    /// frozen hub cannot block this thread.
    private func connect() throws -> RawPeer? {
        guard let peer = try? RawPeer(socketPath) else { return nil }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(peer.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try peer.write(try WireFormat.encode(.hello(.init(storeUUID: storeUUID, processID: 4242, instanceID: instance, processName: "forger", cursor: 0))))
        return peer
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
