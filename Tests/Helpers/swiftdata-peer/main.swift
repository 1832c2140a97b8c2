// A second process for the SwiftData tests: a container on the store of a shared directory,
// driven line by line on stdin, one answer line on stdout for each command.
//
//   swiftdata-peer <shared-dir> [<postgres-url>]   (the store: the directory's default.store, or
//                                                  a database on a server)
//     insert <sensor> <value>   -> ok      (a Reading, saved by a context whose author is "peer")
//     set <sensor> <value>      -> ok      (the reading's value changed and saved)
//     consume <name>            -> consuming   (a ModelChangeConsumer that raises an Alert for
//                                              each reading inserted above 40, in the background)
//     quit                      -> bye     (stops sharing and exits)
//
// A failing command answers "error <description>".
import AmbarPostgres
import AmbarSwiftData
import Foundation
import SwiftDataSamples

func reply(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

guard (2...3).contains(CommandLine.arguments.count) else {
    FileHandle.standardError.write(Data("usage: swiftdata-peer <shared-dir> [<postgres-url>]\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: CommandLine.arguments[1])
let configuration =
    CommandLine.arguments.count == 3
    ? ModelConfiguration(store: .postgres(URL(string: CommandLine.arguments[2]) ?? directory), sharing: .sharedDirectory(directory))
    : ModelConfiguration(sharedDirectory: directory)
let container: ModelContainer
do {
    container = try ModelContainer(for: Reading.self, Alert.self, configurations: configuration)
} catch {
    reply("error \(error)")
    exit(1)
}

/// The commands, on the container.
struct Commands: Sendable {
    let container: ModelContainer

    /// The reading of `sensor`, in `context`.
    func reading(_ sensor: String, in context: ModelContext) throws -> Reading? {
        try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.sensor == sensor })).first
    }

    /// Runs one command; `nil` for `quit`.
    func run(_ words: [Substring], context: ModelContext) throws -> String? {
        switch (words.first, words.count) {
        case ("insert", 3):
            context.insert(Reading(sensor: String(words[1]), value: Double(words[2]) ?? 0))
            try context.save()
            return "ok"
        case ("set", 3):
            guard let found = try reading(String(words[1]), in: context) else { return "error no reading of \(words[1])" }
            found.value = Double(words[2]) ?? 0
            try context.save()
            return "ok"
        case ("consume", 2):
            var options = ModelChangeConsumer.Options()
            options.startingPoint = .oldestRetained  // what was saved before the consumer first read the ledger too
            let consumer = try ModelChangeConsumer(name: String(words[1]), container: container, options: options)
            Task {
                do {
                    try await consumer.process { transaction, context in
                        for case .insert(let insert as DefaultHistoryInsert<Reading>) in transaction.changes {
                            guard let reading = context.model(for: insert.changedPersistentIdentifier) as? Reading, reading.value > 40 else { continue }
                            context.insert(Alert(sensor: reading.sensor, value: reading.value, token: transaction.token.tokenValue))
                        }
                    }
                } catch {
                    FileHandle.standardError.write(Data("swiftdata-peer: the consumer failed: \(error)\n".utf8))
                    exit(1)
                }
            }
            return "consuming"
        case ("quit", 1):
            return nil
        default:
            return "error unknown command \(words.joined(separator: " "))"
        }
    }
}

// Commands are read on a thread of their own; the main queue merges other processes' saves.
let commands = Commands(container: container)
Thread.detachNewThread {
    let context = ModelContext(container)
    context.author = "peer"
    reply("ready")
    while let line = readLine() {
        do {
            guard let answer = try commands.run(line.split(separator: " "), context: context) else { break }
            reply(answer)
        } catch {
            reply("error \(error)")
        }
    }
    let done = DispatchSemaphore(value: 0)
    Task {
        await container.stopSharing()
        done.signal()
    }
    done.wait()
    reply("bye")
    exit(0)
}
dispatchMain()
