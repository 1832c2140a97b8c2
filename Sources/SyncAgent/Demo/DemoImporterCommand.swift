import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation
import SharedStoreIPC

/// `sync-agent demo-importer`: the demo's writer process (started by `sync-agent demo`).
///
/// Inserts `--records` products in batches through importer contexts, then updates a fifth of
/// them and deletes a tenth, every save announced to the other processes. Prints one JSON line.
struct DemoImporterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-importer", abstract: "The demo's importer process (run by `sync-agent demo`).", shouldDisplay: false)

    @OptionGroup var directory: DirectoryOptions

    @Option(help: "How many products to insert.")
    var records = 3000

    @Option(help: "Products per transaction.")
    var batch = 250

    func run() async throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        // Wait (briefly) for the hub, so the first saves are announced rather than found by polling.
        for _ in 0..<200 where !sync.isConnected { try await Task.sleep(for: .milliseconds(10)) }
        let context = try stack.importerContext()
        context.transactionAuthor = "demo importer"
        let total = records
        let batch = self.batch
        let started = ContinuousClock.now
        let (transactions, updated, deleted) = try await context.perform { () throws -> (Int, Int, Int) in
            var transactions = 0
            var ids: [ManagedObjectID] = []
            for start in stride(from: 0, to: total, by: batch) {
                var inserted: [ManagedObject] = []
                for i in start..<min(start + batch, total) {
                    let product = try context.insertObject(entityName: DemoModel.entity)
                    try product.setValue(.string(String(format: "SKU-%06d", i)), forKey: "sku")
                    try product.setValue(.string("Product \(i)"), forKey: "title")
                    try product.setValue(.double(Double(i % 1000) + 0.99), forKey: "price")
                    try product.setValue(.integer(Int64(i % 50)), forKey: "stock")
                    inserted.append(product)
                }
                try context.save()
                ids += inserted.map(\.objectID)
                transactions += 1
                try context.reset()
            }
            // Updates: every fifth product gets a new price and stock.
            let toUpdate = stride(from: 0, to: ids.count, by: 5).map { ids[$0] }
            for start in stride(from: 0, to: toUpdate.count, by: batch) {
                for id in toUpdate[start..<min(start + batch, toUpdate.count)] {
                    let product = try context.existingObject(with: id)
                    try product.setValue(.double(Double(id.primaryKey ?? 0) * 1.5), forKey: "price")
                    try product.setValue(.integer(999), forKey: "stock")
                }
                try context.save()
                transactions += 1
                try context.reset()
            }
            // Deletes: every tenth product, offset so some updated ones go too.
            let toDelete = stride(from: 3, to: ids.count, by: 10).map { ids[$0] }
            for start in stride(from: 0, to: toDelete.count, by: batch) {
                for id in toDelete[start..<min(start + batch, toDelete.count)] {
                    try context.delete(try context.existingObject(with: id))
                }
                try context.save()
                transactions += 1
                try context.reset()
            }
            return (transactions, toUpdate.count, toDelete.count)
        }
        let seconds = (ContinuousClock.now - started).inSeconds
        let token = try stack.writerCoordinator.currentHistoryToken()
        let digest = try DemoModel.storeDigest(stack)
        await sync.stop()
        try JSONLine.print([
            "pid": Int(getpid()), "inserted": total, "updated": updated, "deleted": deleted, "transactions": transactions,
            "seconds": seconds, "token": token, "digest": digest.digest, "count": digest.count,
        ])
    }
}
