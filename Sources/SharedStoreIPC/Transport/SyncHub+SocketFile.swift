import AmbarCore
import AmbarDataStack
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

extension SyncHub {
    /// How often the hub checks that its socket path still names its listener.
    static let socketFileCheckInterval: TimeAmount = .seconds(1)

    /// Checks, every second, that the socket path still names this hub's listener. A socket file
    /// removed while the hub runs (an operator's `rm`, a cleanup of its folder) is bound again
    /// at once (its folder made again, but not the directories above it: ``FolderRemaking``) —
    /// processes started later find the hub instead of polling the ledger until this process
    /// ends. When the path names another socket (a hub another process started meanwhile),
    /// this one hands over: it stops accepting and closes its connections, which reconnect there.
    func watchSocketFile() {
        guard configuration.inheritedSocket == nil else { return }
        let box = self.state
        box.eventLoop.scheduleRepeatedAsyncTask(initialDelay: Self.socketFileCheckInterval, delay: Self.socketFileCheckInterval) {
            [weak self] (task: RepeatedTask) -> EventLoopFuture<Void> in
            guard let self, !box.value.displaced, !box.value.stopped else {
                task.cancel()
                return box.eventLoop.makeSucceededVoidFuture()
            }
            return self.checkSocketFile(box)
        }
    }

    /// One check (on the hub's event loop); see ``watchSocketFile()``.
    private func checkSocketFile(_ box: NIOLoopBoundBox<HubState>) -> EventLoopFuture<Void> {
        let path = configuration.socketPath
        let now = FileIdentity(path: path)
        let state = box.value
        guard now != state.socketFile else { return box.eventLoop.makeSucceededVoidFuture() }
        guard now == nil else {
            Self.logger.error(
                "the hub's socket path now names another socket (another hub started after this one's was removed?); handing over: this hub stops accepting and its processes reconnect there",
                metadata: ["socket": "\(path)"])
            state.displaced = true
            state.listener?.close(promise: nil)
            for peer in state.peers.values { peer.channel.close(promise: nil) }
            return box.eventLoop.makeSucceededVoidFuture()
        }
        @Sendable func trouble(_ message: String) {
            let state = box.value
            guard state.socketFileTrouble != message else { return }
            state.socketFileTrouble = message
            Self.logger.error("\(message) (tried again every second)", metadata: ["socket": "\(path)"])
        }
        // The socket's own folder is made again if it was removed, but not the directories above it.
        do throws(FolderRemaking.Refused) {
            try FolderRemaking.remake(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        } catch {
            trouble("the hub's socket file was removed and its folder cannot be made again: \(error)")
            return box.eventLoop.makeSucceededVoidFuture()
        }
        return rebind().hop(to: box.eventLoop).map { channel in
            _ = chmod(path, 0o660)
            let state = box.value
            state.listener?.close(promise: nil)  // bound by the hub itself: closing it removes no file
            state.listener = channel
            state.socketFile = FileIdentity(path: path)
            state.socketFileTrouble = nil
            Self.logger.warning("the hub's socket file was removed while it ran; bound it again", metadata: ["socket": "\(path)"])
        }.recover { error in
            trouble("the hub's socket file was removed and could not be bound again: \(error)")
        }
    }
}
