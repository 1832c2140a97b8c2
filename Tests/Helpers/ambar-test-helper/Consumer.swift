// `ambar-test-helper consume <shared-dir> <store> <name> <batch-size>`: a durable consumer that
// makes one `Alert` per `Item` inserted by other processes whose value is a multiple of 3 (the
// entities of `alertModel()`), exactly once. Prints "ready <pid>" once it runs, then runs until
// killed; an error ends it with status 1.
import AmbarStack
import Foundation
import SharedStoreIPC

func runConsumer(directory: URL, store argument: String, name: String, batchSize: Int) throws {
    let stack = try openStack(argument, name: "consumer")
    Task {
        do {
            let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
            var options = ChangeConsumer.Options()
            options.maximumBatchSize = batchSize
            options.startingPoint = .oldestRetained
            // A short ownership lease: a copy started after a SIGKILL takes over within 0.3 s, so
            // that the tests' many restarts each get to work.
            options.lease = .milliseconds(300)
            let consumer = try ChangeConsumer(name: name, sharing: sync, options: options)
            reply("ready \(getpid())")
            try await consumer.process { transaction, context in
                for id in transaction.inserted where id.entityName == "Item" {
                    let item = try context.existingObject(with: id)
                    guard case .integer(let value) = try item.value(forKey: "value"), value % 3 == 0 else { continue }
                    let alert = try context.insertObject(entityName: "Alert")
                    try alert.setValue(try item.value(forKey: "uid"), forKey: "item")
                    try alert.setValue(.integer(transaction.token), forKey: "token")
                }
            }
            fail("the consumer ended")
        } catch {
            fail("the consumer failed: \(error)")
        }
    }
}
