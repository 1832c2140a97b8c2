import AmbarStack
import Foundation

/// The model the peer helper uses: it reads it from the store.
public func itemModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [itemEntity()])
}

/// `Item`: a unique `uid` and an integer `value`.
private func itemEntity() -> EntityDescription {
    EntityDescription(
        "Item",
        properties: [
            .attribute("uid", .string),
            .attribute("value", .integer64, defaultValue: 0),
        ], uniquenessConstraints: [["uid"]])
}

/// The items of ``itemModel()`` and the alerts a durable consumer makes for them
/// (`ambar-test-helper consume`): `Alert.item` names an item's `uid`, `Alert.token` the ledger
/// transaction that inserted it. Alerts have no uniqueness constraint, so a duplicate shows.
public func alertModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        itemEntity(),
        EntityDescription(
            "Alert",
            properties: [
                .attribute("item", .string),
                .attribute("token", .integer64, defaultValue: 0),
            ]),
    ])
}

/// A `ambar-test-helper peer` process driven line by line. Killed when released.
public final class Peer {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private lazy var reader = LineReader(output.fileHandleForReading)
    public let name: String
    public let logFile: URL
    /// The test directory the peer works in, held so that it is removed only after the peer is
    /// killed (a directory released first would be removed under a running process).
    private var directory: TemporaryDirectory?

    /// What the peer wrote to standard error.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// A peer on the store file `store` (by default the directory's).
    public convenience init(_ name: String, directory: TemporaryDirectory, store: URL? = nil) throws {
        try self.init(name, directory: directory, storeArgument: (store ?? directory.store).path)
    }

    /// A peer on the store `storeArgument` names: a file's path, or a `postgres://` URL; run
    /// under `launcher` when given (`ip netns exec HOST`: a process on another test host), with
    /// `environment` added to the test's.
    public convenience init(
        _ name: String, directory: TemporaryDirectory, storeArgument: String, launcher: [String] = [], environment: [String: String] = [:]
    ) throws {
        try self.init(
            name, program: "ambar-test-helper", arguments: ["peer", directory.url.path, storeArgument], logDirectory: directory.url, launcher: launcher,
            environment: environment)
        self.directory = directory
    }

    /// The built helper `program` run with `arguments`, its standard error in
    /// `<logDirectory>/<name>.log`; it must answer "ready" first.
    public init(
        _ name: String, program: String, arguments: [String], logDirectory: URL, launcher: [String] = [], environment: [String: String] = [:]
    ) throws {
        self.name = name
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        if let launcherProgram = launcher.first {
            process.executableURL = URL(fileURLWithPath: launcherProgram)
            process.arguments = Array(launcher.dropFirst()) + [BuiltProducts.url(program).path] + arguments
        } else {
            process.executableURL = BuiltProducts.url(program)
            process.arguments = arguments
        }
        process.standardInput = input
        process.standardOutput = output
        logFile = logDirectory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        let ready = try readLine(timeout: 20)
        guard ready.hasPrefix("ready") else { throw PeerError.unexpected(name, ready) }
    }

    /// What went wrong talking to a peer.
    public enum PeerError: Error {
        case unexpected(String, String)
        case timeout(String, log: String)
        /// `await` polled `command` until its deadline and the last answer still did not satisfy it.
        case conditionNotMet(String, command: String, last: String)
    }

    /// Sends a command and returns its one-line answer.
    @discardableResult
    public func send(_ command: String, timeout: TimeInterval = 20) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        return try readLine(timeout: timeout)
    }

    private func readLine(timeout: TimeInterval) throws -> String {
        let process = self.process
        guard let line = reader.next(until: Date().addingTimeInterval(timeout), alive: { process.isRunning }) else {
            throw PeerError.timeout(name, log: String(log.prefix(1200)))
        }
        return line
    }

    /// Sends a command without waiting for its answer (read it later with ``receive(timeout:)``).
    public func post(_ command: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
    }

    /// The next answer line.
    public func receive(timeout: TimeInterval = 60) throws -> String { try readLine(timeout: timeout) }

    /// Polls `command` until its answer satisfies `condition`, and returns that answer.
    ///
    /// - Throws: ``PeerError/conditionNotMet(_:command:last:)`` when no answer satisfied it within
    ///   `timeout` seconds (a wait never passes on timeout).
    public func await(_ command: String, timeout: TimeInterval = 10, until condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        repeat {
            last = try send(command)
            if condition(last) { return last }
            usleep(20_000)
        } while Date() < deadline
        throw PeerError.conditionNotMet(name, command: command, last: last)
    }

    public func kill(signal: Int32 = SIGKILL) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
        process.waitUntilExit()
    }

    deinit { kill() }
}

/// Executables built beside the test bundle (the helper, sync-agent).
public enum BuiltProducts {
    public static func url(_ name: String) -> URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let direct = testBundle.appendingPathComponent(name)
        return FileManager.default.isExecutableFile(atPath: direct.path) ? direct : testBundle.deletingLastPathComponent().appendingPathComponent(name)
    }
}
