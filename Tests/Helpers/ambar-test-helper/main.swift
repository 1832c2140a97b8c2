// A second (third, …) process for multi-process tests.
//
//   ambar-test-helper set <store> <object-uri> <key>=<value>...
//       Opens the store with the model it keeps, sets attributes, saves, exits.
//       Values: s:<text>, d:<double>, i:<int>.
//   ambar-test-helper peer <shared-dir> <store-file>
//       Opens a DataStack on the store, shares it through the directory, and answers commands on
//       stdin, one per line, with one line on stdout:
//         insert <uid> <value> | update <uid> <value> | delete <uid>   -> ok <token>
//         watch        -> ok <count>   (a results controller over every Item, on the main context)
//         digest       -> digest <uid=value,...> (the controller's objects, sorted by uid)
//         tokens       -> tokens <remote tokens merged, in order>
//         burst <n> <prefix> -> ok <last token>  (n inserts, one save each)
//         storedigest  -> digest <...> (the same rendering, read fresh from the store)
//         status       -> status connected=<bool> hub=<bool> merged=<token> expired=<n> checks=<n>
//         bigsaves <n> <size> -> ok  (n saves of <size> inserts each, uids "<save>-<i>")
//         integrity    -> integrity ok | integrity <problems>
//   ambar-test-helper open <model-file> <store-file>
//       Opens the store with that model (migrating it if needed) and answers "opened <model hash>"
//       or "error <AmbarError>", then commands on stdin:
//         insert <name> -> ok | error <AmbarError>   (an Item with that name, saved)
//         quit          -> bye
//   ambar-test-helper diskfull <dir> tmpfs|fsize     (see DiskFull.swift)
//   ambar-test-helper readonly <dir>                 (see DiskFull.swift)
//   ambar-test-helper consume <shared-dir> <store> <name> <batch-size> [receiver]   (see Consumer.swift)
//   ambar-test-helper probe <socket> <store-uuid>
//       Tries the hub handshake and prints "welcome", "refused <code>" or "unreachable <error>".
//         quit         -> bye
//
// Exits 0 on success; prints the error and exits 1 otherwise.
import AmbarPostgres
import AmbarStack
import Foundation
import Logging
import NIOPosix
import SharedStoreIPC

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ambar-test-helper: \(message)\n".utf8))
    exit(1)
}

func reply(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func parse(_ text: Substring) -> AttributeValue? {
    let kind = text.prefix(2)
    let body = String(text.dropFirst(2))
    switch kind {
    case "s:": return .string(body)
    case "d:": return Double(body).map { .double($0) }
    case "i:": return Int64(body).map { .integer($0) }
    default: return nil
    }
}

/// A store argument: a `postgres://` URL, or the path of an SQLite file.
func storeDescription(_ argument: String) -> StoreDescription {
    PostgresURL.isPostgresURL(argument) ? .postgres(URL(string: argument)!) : .sqlite(URL(fileURLWithPath: argument))
}

func runSet(_ arguments: [String]) throws {
    let store = storeDescription(arguments[2])
    let model = try PersistentStoreCoordinator.storedModel(in: store)
    let coordinator = try PersistentStoreCoordinator(model: model, store: store)
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "helper")
    guard let uri = URL(string: arguments[3]) else { fail("bad URI \(arguments[3])") }
    let id = try coordinator.managedObjectID(forURIRepresentation: uri)
    let assignments = Array(arguments.dropFirst(4))
    try context.performAndWait { () throws(AmbarError) in
        let object = try context.existingObject(with: id)
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = parse(parts[1]) else {
                throw AmbarError.invalidPredicate("bad assignment '\(assignment)'")
            }
            try object.setValue(value, forKey: String(parts[0]))
        }
        try context.save()
    }
}

/// The peer's main-queue state.
@MainActor final class Viewer {
    static var controller: FetchedResultsController<ManagedObject>?
}

let remoteTokens = Locked<[Int64]>([])
let observationBox = Locked<ContextObservation?>(nil)
let expiredCount = Locked<Int>(0)

/// A stack on the store `argument` names, with the model the store keeps.
func openStack(_ argument: String, name: String) throws -> DataStack {
    let store = storeDescription(argument)
    let model = try PersistentStoreCoordinator.storedModel(in: store)
    if case .sqlite(let url) = store {
        return try DataStack.open(model: .model(model), storeURL: url, name: name)
    }
    return try DataStack.open(storeType: .postgres(URL(string: argument)!), model: .model(model), name: name)
}

func runPeer(directory: URL, store argument: String) throws {
    let stack = try openStack(argument, name: "peer")
    let ready = DispatchSemaphore(value: 0)
    let syncBox = Locked<SharedStoreSync?>(nil)
    Task {
        do {
            var configuration = SharingConfiguration.sharedDirectory(directory)
            // A test that must see which doorbell delivered sets the periodic ledger check apart.
            if let seconds = ProcessInfo.processInfo.environment["AMBAR_HELPER_LEDGER_CHECK_SECONDS"].flatMap(Int64.init) {
                configuration.ledgerCheckInterval = .seconds(seconds)
            }
            // A test that must keep the hub out of this process says so.
            if ProcessInfo.processInfo.environment["AMBAR_HELPER_MAY_NOT_SERVE_HUB"] == "1" {
                configuration.mayServeHub = false
            }
            let sync = try await SharedStoreSync.start(stack: stack, configuration: configuration)
            let observation = sync.observeRemoteMerges { event in
                if event.historyExpired {
                    expiredCount.withLock { $0 += 1 }
                } else {
                    remoteTokens.withLock { $0.append(event.token) }
                }
            }
            observationBox.withLock { $0 = observation }
            syncBox.withLock { $0 = sync }
            ready.signal()
        } catch {
            fail("sharing failed: \(error)")
        }
    }
    Thread.detachNewThread {
        ready.wait()
        reply("ready \(getpid())")
        while let line = readLine() {
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first else { continue }
            do {
                switch command {
                case "insert", "update", "delete":
                    let importer = try stack.importerContext()
                    let token: Int64? = try importer.performAndWait { () throws(AmbarError) -> Int64? in
                        let uid = words.count > 1 ? words[1] : ""
                        let value = words.count > 2 ? Int64(words[2]) ?? 0 : 0
                        if command == "insert" {
                            let item = try importer.insertObject(entityName: "Item")
                            try item.setValue(.string(uid), forKey: "uid")
                            try item.setValue(.integer(value), forKey: "value")
                        } else {
                            let request = FetchRequest<ManagedObject>(entityName: "Item", predicate: Key<String>("uid") == uid)
                            for item in try importer.fetch(request) {
                                if command == "update" { try item.setValue(.integer(value), forKey: "value") } else { try importer.delete(item) }
                            }
                        }
                        try importer.save()
                        return importer.lastSavedToken
                    }
                    reply("ok \(token ?? 0)")
                case "watch":
                    let main = try stack.mainContext
                    let count = try DispatchQueue.main.sync {
                        try MainActor.assumeIsolated { () throws -> Int in
                            let controller = FetchedResultsController(
                                fetchRequest: FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [ObjectSortDescriptor(key: "uid")]),
                                context: main)
                            try controller.performFetch()
                            Viewer.controller = controller
                            return controller.fetchedObjects.count
                        }
                    }
                    reply("ok \(count)")
                case "digest":
                    let digest = DispatchQueue.main.sync {
                        MainActor.assumeIsolated { () -> String in
                            (Viewer.controller?.fetchedObjects ?? []).map { item in
                                let uid = (try? item.value(forKey: "uid")).map { "\($0)" } ?? "?"
                                let value = (try? item.value(forKey: "value")).map { "\($0)" } ?? "?"
                                return "\(uid)=\(value)"
                            }.joined(separator: ",")
                        }
                    }
                    reply("digest \(digest)")
                case "burst":
                    let count = words.count > 1 ? Int(words[1]) ?? 0 : 0
                    let prefix = words.count > 2 ? words[2] : "b"
                    let importer = try stack.importerContext()
                    let last = Locked<Int64>(0)
                    let observation = importer.observeDidSave { note in last.withLock { $0 = note.token ?? $0 } }
                    defer { observation.cancel() }
                    for i in 0..<count {
                        try importer.performAndWait { () throws(AmbarError) in
                            let item = try importer.insertObject(entityName: "Item")
                            try item.setValue(.string("\(prefix)\(i)"), forKey: "uid")
                            try item.setValue(.integer(Int64(i)), forKey: "value")
                            try importer.save()
                            try importer.reset()
                        }
                    }
                    reply("ok \(last.withLock { $0 })")
                case "burstretry":
                    // Like burst, but each save carries an idempotency key and is retried (for up
                    // to 60 s) while the server is unreachable: "ok <saves> retries=<n>".
                    let count = words.count > 1 ? Int(words[1]) ?? 0 : 0
                    let prefix = words.count > 2 ? words[2] : "r"
                    let importer = try stack.importerContext()
                    var retries = 0
                    for i in 0..<count {
                        let deadline = Date().addingTimeInterval(60)
                        while true {
                            do {
                                try importer.performAndWait { () throws(AmbarError) in
                                    try importer.reset()
                                    let item = try importer.insertObject(entityName: "Item")
                                    try item.setValue(.string("\(prefix)\(i)"), forKey: "uid")
                                    try item.setValue(.integer(Int64(i)), forKey: "value")
                                    try importer.save(idempotencyKey: "\(prefix)\(i)")
                                }
                                break
                            } catch let error as AmbarError {
                                if case .alreadySaved = error { break }  // committed, though its answer was lost
                                guard case .serverUnavailable = error, Date() < deadline else { throw error }
                                retries += 1
                                usleep(50_000)  // a pause between attempts, not a synchronisation
                            }
                        }
                    }
                    try importer.performAndWait { () throws(AmbarError) in try importer.reset() }
                    reply("ok \(count) retries=\(retries)")
                case "readloop":
                    // Counts the items again and again for N seconds, on a context of its own:
                    // "readloop reads=<n> errors=<n> counts=<distinct counts, sorted>".
                    let seconds = words.count > 1 ? Double(words[1]) ?? 1 : 1
                    let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try stack.mainCoordinator)
                    var reads = 0
                    var errors = 0
                    var counts = Set<Int>()
                    let end = Date().addingTimeInterval(seconds)
                    while Date() < end {
                        do {
                            counts.insert(
                                try reader.performAndWait { () throws(AmbarError) in try reader.count(for: FetchRequest<ManagedObject>(entityName: "Item")) })
                            reads += 1
                        } catch {
                            errors += 1
                        }
                        usleep(2_000)
                    }
                    reply("readloop reads=\(reads) errors=\(errors) counts=\(counts.sorted().map(String.init).joined(separator: ","))")
                case "storedigest":
                    let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try stack.mainCoordinator)
                    let digest = try reader.performAndWait { () throws -> String in
                        try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [ObjectSortDescriptor(key: "uid")])).map { item in
                            "\(try item.value(forKey: "uid"))=\(try item.value(forKey: "value"))"
                        }.joined(separator: ",")
                    }
                    reply("digest \(digest)")
                case "status":
                    let sync = syncBox.withLock { $0 }
                    reply(
                        "status connected=\(sync?.isConnected ?? false) hub=\(sync?.servesHub ?? false) listening=\(sync?.isListeningToServer ?? false) rejected=\(sync?.rejectedMessages ?? -1) merged=\(sync?.mergedThrough ?? -1) expired=\(expiredCount.withLock { $0 }) checks=\(sync?.ledgerChecks ?? 0) bell=\(sync?.bellRingsReceived ?? 0) bellLate=\(sync?.bellRingsFoundAtTimeout ?? 0) bellProblem=\(sync?.bellProblem == nil ? "none" : "yes")"
                    )
                case "bigsaves":
                    let saves = words.count > 1 ? Int(words[1]) ?? 0 : 0
                    let size = words.count > 2 ? Int(words[2]) ?? 0 : 0
                    let importer = try stack.importerContext()
                    for n in 0..<saves {
                        try importer.performAndWait { () throws(AmbarError) in
                            for i in 0..<size {
                                let item = try importer.insertObject(entityName: "Item")
                                try item.setValue(.string("\(n)-\(i)"), forKey: "uid")
                                try item.setValue(.integer(Int64(n)), forKey: "value")
                            }
                            try importer.save()
                            try importer.reset()
                        }
                    }
                    reply("ok")
                case "integrity":
                    let problems = try stack.mainCoordinator.integrityCheck()
                    reply("integrity " + (problems.isEmpty ? "ok" : problems.joined(separator: "; ")))
                case "tokens":
                    reply("tokens " + remoteTokens.withLock { $0.map(String.init).joined(separator: ",") })
                case "quit":
                    let sync = syncBox.withLock { $0 }
                    let done = DispatchSemaphore(value: 0)
                    Task {
                        await sync?.stop()
                        done.signal()
                    }
                    done.wait()
                    reply("bye")
                    exit(0)
                default:
                    reply("error unknown command \(command)")
                }
            } catch {
                reply("error \(error)")
            }
        }
        exit(0)
    }
    dispatchMain()
}

/// `open`: one process on a store with a given model, for migration tests; `ordered OWNER KEY`
/// prints the URIs of an ordered relationship in order, `move OWNER KEY FROM TO` moves one and saves.
func runOpen(model file: URL, store: URL) {
    let coordinator: PersistentStoreCoordinator
    do throws(AmbarError) {
        let model = try ModelFile.load(file)
        coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(store))
        reply("opened \(model.versionHash)")
    } catch {
        reply("error \(error)")
        return
    }
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    while let line = readLine() {
        let words = line.split(separator: " ")
        switch words.first {
        case "insert" where words.count == 2:
            do throws(AmbarError) {
                try context.performAndWait { () throws(AmbarError) in
                    try context.insertObject(entityName: "Item").setValue(String(words[1]), forKey: "name")
                    try context.save()
                }
                reply("ok")
            } catch {
                try? context.performAndWait { () throws(AmbarError) in try context.rollback() }
                reply("error \(error)")
            }
        case "ordered" where words.count == 3, "move" where words.count == 5:
            do throws(AmbarError) {
                let id = try coordinator.managedObjectID(forURIRepresentation: URL(string: String(words[1]))!)
                let key = String(words[2])
                let line = try context.performAndWait { () throws(AmbarError) -> String in
                    try context.refreshAllObjects()
                    let owner = try context.existingObject(with: id)
                    if words[0] == "move", let from = Int(words[3]), let to = Int(words[4]) {
                        try owner.moveObject(at: from, to: to, inOrderedKey: key)
                        try context.save()
                        return "ok"
                    }
                    return try owner.orderedObjects(forKey: key).map(\.objectID.uriString).joined(separator: " ")
                }
                reply(line)
            } catch {
                reply("error \(error)")
            }
        case "quit":
            reply("bye")
            return
        default:
            reply("error unknown command")
        }
    }
}

// Logs go to standard error: standard output carries the line protocol.
LoggingSystem.bootstrap(StreamLogHandler.standardError)

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: set <store> <uri> key=value... | peer <dir> <store>") }
do {
    switch arguments[1] {
    case "set" where arguments.count >= 4:
        try runSet(arguments)
    case "probe" where arguments.count >= 4:
        guard let uuid = UUID(uuidString: arguments[3]) else { fail("bad UUID") }
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            do {
                let client = try await SyncClient.connect(
                    socketPath: arguments[2],
                    hello: .init(storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: "probe", cursor: 0),
                    group: group, onFrame: { _ in }, onClose: {})
                reply("welcome")
                await client.close()
            } catch SyncClient.ConnectError.refused(let code, _) {
                reply("refused \(code)")
            } catch {
                reply("unreachable \(error)")
            }
            try? await group.shutdownGracefully()
            done.signal()
        }
        done.wait()
    case "open" where arguments.count >= 4:
        runOpen(model: URL(fileURLWithPath: arguments[2]), store: URL(fileURLWithPath: arguments[3]))
    case "diskfull" where arguments.count >= 4:
        try runDiskFull(directory: URL(fileURLWithPath: arguments[2]), mode: arguments[3])
    case "readonly":
        try runReadOnly(directory: URL(fileURLWithPath: arguments[2]))
    case "peer" where arguments.count >= 4:
        try runPeer(directory: URL(fileURLWithPath: arguments[2]), store: arguments[3])
    case "consume" where arguments.count >= 6:
        try runConsumer(
            directory: URL(fileURLWithPath: arguments[2]), store: arguments[3], name: arguments[4], batchSize: Int(arguments[5]) ?? 1,
            receiver: arguments.count >= 7 ? URL(fileURLWithPath: arguments[6]) : nil)
        dispatchMain()
    default:
        fail("unknown command \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
