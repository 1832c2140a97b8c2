// ambar-ipc-bench: commit-to-merged latency between processes sharing one store, and hub
// throughput, in release mode.
//
//   swift run -c release ambar-ipc-bench [receivers] [saves]
//
// The publisher (this process) writes its CLOCK_MONOTONIC time at commit start into the row it
// saves; each receiver process, when the change is merged into its main context, subtracts it from
// its own CLOCK_MONOTONIC (system-wide, so comparable across processes).
import AmbarStack
import Foundation
import Logging
import SharedStoreIPC
import Synchronization

func now() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let model = try ManagedObjectModel(entities: [
    EntityDescription("Item", properties: [
        .attribute("uid", .string),
        .attribute("stamp", .integer64, defaultValue: 0),
    ], uniquenessConstraints: [["uid"]]),
])

// MARK: - Receiver

func receiver(directory: URL) throws -> Never {
    let stack = try DataStack.open(model: .model(model), storeURL: directory.appendingPathComponent("bench.sqlite"), name: "bench")
    let latencies = Mutex<[Int64]>([])
    let holder = Mutex<[AnyObject]>([])
    let ready = DispatchSemaphore(value: 0)
    Task.detached {
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
        let main = try stack.mainContext
        let observation = sync.observeRemoteMerges { event in
            let t = now()
            for id in event.refreshed {
                if case .integer(let stamp)? = try? main.registeredObject(for: id)?.value(forKey: "stamp") {
                    latencies.withLock { $0.append(t - stamp) }
                }
            }
        }
        holder.withLock { $0 = [sync, observation] }
        ready.signal()
    }
    ready.wait()
    // Register every item in the main context, as a viewer showing them would.
    DispatchQueue.main.async {
        let main = try? stack.mainContext
        _ = try? main?.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map { try $0.value(forKey: "stamp") }
        say("ready")
    }
    Thread.detachNewThread {
        while let line = readLine() {
            if line == "report" {
                say(latencies.withLock { $0.map(String.init).joined(separator: " ") })
            } else if line == "count" {
                say(String(latencies.withLock { $0.count }))
            } else if line == "reset" {
                latencies.withLock { $0.removeAll() }
                say("ok")
            } else if line == "quit" {
                exit(0)
            }
        }
        exit(0)
    }
    dispatchMain()
}

// MARK: - Publisher

final class Child {
    let process = Process()
    let input = Pipe(), output = Pipe()
    var buffer = Data()

    init(directory: URL) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["receiver", directory.path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func line() -> String {
        while true {
            if let i = buffer.firstIndex(of: 0x0A) {
                let s = String(decoding: buffer[buffer.startIndex..<i], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...i)
                return s
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return "" }
            buffer.append(chunk)
        }
    }

    func ask(_ command: String) -> String {
        try? input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        return line()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

func percentile(_ sorted: [Int64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
}

func publisher(receivers: Int, saves: Int) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-ipc-bench-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let stack = try DataStack.open(model: .model(model), storeURL: directory.appendingPathComponent("bench.sqlite"), name: "bench")
    let importer = try stack.importerContext()
    try importer.performAndWait { () throws(AmbarError) in
        _ = try importer.batchInsert(entityName: "Item", rows: (0..<100).map { ["uid": .string("i\($0)")] })
    }
    let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
    while !sync.isConnected { try await Task.sleep(nanoseconds: 10_000_000) }
    let children = try (0..<receivers).map { _ in try Child(directory: directory) }
    for child in children { _ = child.line() }  // ready
    try await Task.sleep(nanoseconds: 300_000_000)

    func save(_ n: Int) throws {
        try importer.performAndWait { () throws(AmbarError) in
            let items = try importer.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: Key<String>("uid") == "i\(n % 100)"))
            try items.first?.setValue(.integer(now()), forKey: "stamp")
            try importer.save()
        }
    }
    // Latency: spaced saves.
    for n in 0..<50 { try save(n); usleep(1_000) }
    try await Task.sleep(nanoseconds: 200_000_000)
    for child in children { _ = child.ask("reset") }
    for n in 0..<saves { try save(n); usleep(2_000) }
    func waitAll(_ expected: Int) async throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if children.allSatisfy({ Int($0.ask("count")) ?? 0 >= expected }) { return }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
    try await waitAll(saves)
    var all: [Int64] = []
    for child in children { all += child.ask("report").split(separator: " ").compactMap { Int64($0) } }
    all.sort()
    say(String(format: "latency, %d receiver(s), %d spaced saves: p50 %.0f µs, p99 %.0f µs, p99.9 %.0f µs (n=%d)",
               receivers, saves, percentile(all, 0.5), percentile(all, 0.99), percentile(all, 0.999), all.count))

    // Throughput: back-to-back saves until every receiver merged them all.
    for child in children { _ = child.ask("reset") }
    let burst = saves * 2
    let start = now()
    for n in 0..<burst { try save(n) }
    let published = now()
    try await waitAll(burst)
    let end = now()
    say(String(format: "throughput, %d receiver(s): %d saves published in %.0f ms (%.0f µs each), all merged after %.0f ms: %.0f messages/s per receiver, %.0f deliveries/s through the hub",
               receivers, burst, Double(published - start) / 1e6, Double(published - start) / 1e3 / Double(burst),
               Double(end - start) / 1e6, Double(burst) / (Double(end - start) / 1e9), Double(burst * receivers) / (Double(end - start) / 1e9)))
    for child in children { _ = child.ask("quit") }
    await sync.stop()
}

// Logs go to standard error: standard output carries the line protocol.
LoggingSystem.bootstrap(StreamLogHandler.standardError)

let arguments = CommandLine.arguments
if arguments.count > 2, arguments[1] == "receiver" {
    try receiver(directory: URL(fileURLWithPath: arguments[2]))
}
let receivers = arguments.count > 1 ? Int(arguments[1]) ?? 1 : 1
let saves = arguments.count > 2 ? Int(arguments[2]) ?? 1000 : 1000
try await publisher(receivers: receivers, saves: saves)
