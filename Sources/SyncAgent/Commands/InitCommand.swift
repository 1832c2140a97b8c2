import AmbarStack
import ArgumentParser
import Foundation

/// `sync-agent init --model FILE`: creates the store with its model.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the shared store with a model (the project's JSON model format).")

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "The model file (JSON: {\"entities\": [...]}).")
    var model: String

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() throws {
        bootstrapLogging(level: .warning)
        let modelURL = URL(fileURLWithPath: model)
        let source = ModelSource.named(modelURL.deletingPathExtension().lastPathComponent, directory: modelURL.deletingLastPathComponent())
        let loaded = try source.load()
        let stack = try DataStack.open(model: .model(loaded), storeURL: directory.storeFile, name: "ambar")
        let uuid = try stack.mainCoordinator.storeIdentifier
        if json {
            JSONLine.print(["store": directory.storeFile.path, "uuid": uuid, "model_hash": loaded.versionHash, "entities": loaded.entityNames])
        } else {
            print("store \(directory.storeFile.path) (uuid \(uuid), model \(loaded.versionHash), entities: \(loaded.entityNames.joined(separator: ", ")))")
        }
    }
}
