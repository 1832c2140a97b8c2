import AmbarStack
import ArgumentParser
import Foundation
import Logging
import SharedStoreIPC

/// `sync-agent hub`: the dedicated hub daemon (the same hub code processes embed).
struct HubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub",
        abstract: "Serve the hub for the processes of a shared store until SIGTERM.")

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions

    func run() async throws {
        let logger = Logger(label: "ambar.agent.hub")
        let file = directory.storeFile
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw ValidationError("No store at \(file.path). Create it with `sync-agent init`.")
        }
        let model = try PersistentStoreCoordinator.storedModel(at: file)
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(file))
        guard let uuid = UUID(uuidString: coordinator.storeIdentifier) else { throw ValidationError("The store has no valid UUID.") }
        let socketPath = socket.path(in: directory.url)
        let socketDirectory = URL(fileURLWithPath: socketPath).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
        // Hold the election lock, so processes never start a second hub beside this one.
        let lockPath = socketDirectory.appendingPathComponent("hub.lock").path
        let lock = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o660)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            throw ValidationError("Another process already serves the hub at \(socketPath) (it holds \(lockPath)).")
        }
        defer { close(lock) }
        let hub = try await SyncHub.start(try SyncHub.Configuration(socketPath: socketPath, storeUUID: uuid, storeFile: file))
        logger.info("hub ready", metadata: ["socket": "\(socketPath)", "store": "\(uuid)"])
        let signalNumber = await TerminationSignal.wait()
        logger.info("stopping on signal \(signalNumber)")
        await hub.stop()
    }
}
