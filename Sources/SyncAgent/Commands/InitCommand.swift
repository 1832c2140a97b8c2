import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent init --model FILE`: creates the store with its model.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the shared store with a model (the project's JSON, or a Core Data .xcdatamodeld/.xcdatamodel).")

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "The model file: JSON ({\"entities\": [...]}, see examples/products.model.json) or a Core Data .xcdatamodeld/.xcdatamodel.")
    var model: String

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() throws {
        bootstrapLogging(level: .warning)
        let loaded = try ModelFile.load(URL(fileURLWithPath: model))
        let uuid: String
        if let serverURL = directory.serverURL {
            uuid = try PersistentStoreCoordinator(model: loaded, store: try PostgreSQLSupport.storeDescription(serverURL), name: "ambar.init").storeIdentifier
        } else {
            uuid = try DataStack.open(model: .model(loaded), storeURL: directory.storeFile, name: "ambar").mainCoordinator.storeIdentifier
        }
        if json {
            try JSONLine.print(["store": directory.storeDisplay, "uuid": uuid, "model_hash": loaded.versionHash, "entities": loaded.entityNames])
        } else {
            print("store \(directory.storeDisplay) (uuid \(uuid), model \(loaded.versionHash), entities: \(loaded.entityNames.joined(separator: ", ")))")
        }
    }
}
