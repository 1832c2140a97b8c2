import AmbarStack
import ArgumentParser
import Foundation

/// `sync-agent demo`: shows the engine working on a temporary store, with no setup.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Import records through one coordinator and watch them merge into a viewer on another.")

    @Option(help: "How many records to import.")
    var records = 5_000

    @Option(help: "Records per importer save.")
    var batch = 500

    mutating func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let storeURL = directory.appendingPathComponent("demo.sqlite")

        let model = try ManagedObjectModel(entities: [
            EntityDescription("Item", properties: [
                .attribute("uid", .string),
                .attribute("name", .string),
                .attribute("score", .double, defaultValue: 0.0),
            ], uniquenessConstraints: [["uid"]]),
        ])
        let writer = try PersistentStoreCoordinator(model: model, store: .sqlite(storeURL), name: "writer")
        let reader = try PersistentStoreCoordinator(model: model, store: .sqlite(storeURL), name: "main")
        let viewer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: reader, name: "viewer")
        viewer.mergePolicy = .mergeByPropertyStoreTrump
        let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: writer, name: "importer")
        importer.mergePolicy = .mergeByPropertyObjectTrump

        // The viewer holds the first 100 items, and merges every importer save.
        print("store: \(storeURL.path)")
        let observation = writer.observeDidSave { note in
            viewer.enqueue { viewer.mergeChanges(fromContextDidSave: note) }
        }
        defer { observation.cancel() }

        let count = records, batchSize = batch
        let start = Date()
        try await importer.perform { () throws(AmbarError) in
            var n = 0
            while n < count {
                for i in n..<min(n + batchSize, count) {
                    let item = try importer.insertObject(entityName: "Item")
                    try item.setValue("item-\(i)", forKey: "uid")
                    try item.setValue("Item \(i)", forKey: "name")
                    try item.setValue(Double(i), forKey: "score")
                }
                try importer.save()
                try importer.reset()
                n += batchSize
            }
        }
        let importSeconds = Date().timeIntervalSince(start)
        print(String(format: "imported %d records in %.2f s: %.0f records/s", count, importSeconds, Double(count) / importSeconds))

        try await viewer.perform { () throws(AmbarError) in
            var request = FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [ObjectSortDescriptor(key: "uid")])
            request.fetchLimit = 100
            for item in try viewer.fetch(request) { _ = try item.value(forKey: "score") }
        }
        // Update every record, then check the viewer's loaded objects follow.
        try await importer.perform { () throws(AmbarError) in
            for item in try importer.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                let score = try item.value(forKey: "score")
                if case .double(let d) = score { try item.setValue(d + 1, forKey: "score") }
            }
            try importer.save()
        }
        let viewerDigest = try await viewer.perform { () throws(AmbarError) -> Double in
            try Self.scoreSum(Array(viewer.registeredObjects))
        }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: .sqlite(storeURL)))
        let freshDigest = try await fresh.perform { () throws(AmbarError) -> Double in
            var request = FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [ObjectSortDescriptor(key: "uid")])
            request.fetchLimit = 100
            return try Self.scoreSum(try fresh.fetch(request))
        }
        let converged = viewerDigest == freshDigest
        print("viewer objects refreshed by merge: \(converged ? "all" : "not all") (digest \(viewerDigest) vs store \(freshDigest))")
        print("converged: \(converged ? "yes" : "no")")
        if !converged { throw ExitCode.failure }
    }

    private static func scoreSum(_ items: [ManagedObject]) throws(AmbarError) -> Double {
        var sum = 0.0
        for item in items {
            if case .double(let d) = try item.value(forKey: "score") { sum += d }
        }
        return sum
    }
}
