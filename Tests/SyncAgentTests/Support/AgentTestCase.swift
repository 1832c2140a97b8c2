import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A test case that drives the built `sync-agent` binary in a temporary shared directory.
class AgentTestCase: XCTestCase {
    var directory: TemporaryDirectory!
    var store: URL { directory.url.appendingPathComponent("ambar.sqlite") }
    var agentBinary: URL { BuiltProducts.url("sync-agent") }

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try TemporaryDirectory()
    }

    override func tearDown() { directory = nil }

    /// Runs `sync-agent` to completion; returns its exit status, standard output and error.
    @discardableResult
    func agent(_ arguments: [String], timeout: TimeInterval = 60) throws -> (status: Int32, output: String, error: String) {
        try ProcessRunner.run(agentBinary, arguments, timeout: timeout)
    }

    func json(_ line: Substring) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
    }

    func json(_ text: String) throws -> [String: Any] {
        try json(Substring(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Creates the store with `model` (the item model by default) through `sync-agent init`.
    func initStore(_ model: ManagedObjectModel? = nil) throws {
        let modelFile = directory.url.appendingPathComponent("model.json")
        try JSONEncoder().encode(try model ?? itemModel()).write(to: modelFile)
        let result = try agent(["init", "--model", modelFile.path, "--directory", directory.url.path, "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        let created = try json(result.output)
        XCTAssertEqual(created["store"] as? String, store.path)
    }

    /// Starts `sync-agent` with `arguments` in the background (or `executable` with its own
    /// `arguments`, for wrappers such as `unshare`); killed at the end of the test. Its standard
    /// error goes to `log` (by default a new file in the test's directory).
    func startAgent(
        _ arguments: [String], executable: URL? = nil, arguments wrapperArguments: [String]? = nil,
        output: Any? = FileHandle.nullDevice, environment: [String: String] = [:], log: URL? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable ?? agentBinary
        process.arguments = wrapperArguments ?? arguments
        process.standardOutput = output
        let log = log ?? directory.url.appendingPathComponent("agent-\(arguments.first ?? "x")-\(UUID().uuidString.prefix(4)).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        try process.run()
        addTeardownBlock {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        return process
    }

}
