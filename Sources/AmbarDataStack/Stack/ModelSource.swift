import AmbarCore
import AmbarSQLite
import Foundation

/// Where a stack gets its model: a value, or model files in a models directory — `<name>.json`
/// (the project's format), `<name>.xcdatamodeld` or `<name>.xcdatamodel` (Core Data's); see
/// ``ModelFile``.
///
/// Without an explicit directory, models are searched in `$AMBAR_MODELS_DIRECTORY`, then
/// `Models/` beside the executable, then `Models/` in the current directory.
public enum ModelSource: Sendable {
    /// This model.
    case model(ManagedObjectModel)
    /// The model file `<name>.json`, `<name>.xcdatamodeld` or `<name>.xcdatamodel`.
    case named(String, directory: URL? = nil)
    /// Every model file found, merged into one model (as Ambar does without a model name).
    case allModels(directory: URL? = nil)

    static func searchDirectories(_ explicit: URL?) -> [URL] {
        if let explicit { return [explicit] }
        var result: [URL] = []
        if let env = ProcessInfo.processInfo.environment["AMBAR_MODELS_DIRECTORY"], !env.isEmpty {
            result.append(URL(fileURLWithPath: env, isDirectory: true))
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        result.append(executable.appendingPathComponent("Models", isDirectory: true))
        result.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Models", isDirectory: true))
        return result
    }

    /// Loads the model.
    ///
    /// - Throws: ``AmbarError/modelNotFound(name:searched:)`` or ``AmbarError/invalidModel(_:)``.
    public func load(classes: [ManagedObject.Type] = []) throws(AmbarError) -> ManagedObjectModel {
        switch self {
        case .model(let model):
            return classes.isEmpty ? model : try model.registering(classes)
        case .named(let name, let directory):
            let directories = Self.searchDirectories(directory)
            for dir in directories {
                for ext in ModelFile.extensions {
                    let file = dir.appendingPathComponent("\(name).\(ext)")
                    if FileManager.default.fileExists(atPath: file.path) {
                        return try ModelFile.load(file).registering(classes)
                    }
                }
            }
            throw .modelNotFound(name: name, searched: directories.map(\.path))
        case .allModels(let directory):
            let directories = Self.searchDirectories(directory)
            var entities: [EntityDescription] = []
            for dir in directories {
                // try?: a folder that is not there (or cannot be listed) holds no model: the error below lists every folder searched
                let files = (try? FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)) ?? []
                for file in files.filter({ ModelFile.extensions.contains($0.pathExtension) }).sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
                    entities += try ModelFile.load(file).entities
                }
                if !entities.isEmpty { break }
            }
            guard !entities.isEmpty else { throw .modelNotFound(name: "*", searched: directories.map(\.path)) }
            return try ManagedObjectModel(entities: entities, classes: classes)
        }
    }
}
