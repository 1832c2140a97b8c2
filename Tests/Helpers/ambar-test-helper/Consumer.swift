// `ambar-test-helper consume <shared-dir> <store> <name> <batch-size> [RECEIVER]`: a durable
// consumer that makes one `Alert` per `Item` inserted by other processes whose value is a multiple
// of 3 (the entities of `alertModel()`), exactly once. With RECEIVER it also records an outbox
// message per alert (its payload the item's uid) and delivers them by appending "KEY<TAB>UID" lines
// to RECEIVER (written and synced before the message is removed: the receiver of an effect). Prints
// "ready <pid>" once it runs, then runs until killed; an error ends it with status 1.
import AmbarStack
import Foundation
import SharedStoreIPC

func runConsumer(directory: URL, store argument: String, name: String, batchSize: Int, receiver: URL?) throws {
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
            if let receiver { deliver(consumer, to: receiver) }
            try await consumer.process { transaction, context in
                for id in transaction.inserted where id.entityName == "Item" {
                    let item = try context.existingObject(with: id)
                    guard case .integer(let value) = try item.value(forKey: "value"), value % 3 == 0 else { continue }
                    let alert = try context.insertObject(entityName: "Alert")
                    try alert.setValue(try item.value(forKey: "uid"), forKey: "item")
                    try alert.setValue(.integer(transaction.token), forKey: "token")
                    if receiver != nil, case .string(let uid) = try item.value(forKey: "uid") {
                        try context.recordOutboxMessage(topic: "alert", payload: Data(uid.utf8))
                    }
                }
            }
            fail("the consumer ended")
        } catch {
            fail("the consumer failed: \(error)")
        }
    }
}

/// Delivers `consumer`'s outbox to `receiver`, a line per message, synced before the removal.
private func deliver(_ consumer: ChangeConsumer, to receiver: URL) {
    Task {
        do {
            try await consumer.deliverOutbox { message in
                let descriptor = open(receiver.path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
                guard descriptor >= 0 else { throw POSIXError(.EIO) }
                defer { close(descriptor) }
                let line = Array("\(message.key)\t\(String(decoding: message.payload, as: UTF8.self))\n".utf8)
                guard write(descriptor, line, line.count) == line.count, fsync(descriptor) == 0 else { throw POSIXError(.EIO) }
            }
            fail("the outbox delivery ended")
        } catch {
            fail("the outbox delivery failed: \(error)")
        }
    }
}
