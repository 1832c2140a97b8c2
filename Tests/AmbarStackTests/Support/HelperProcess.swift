import AmbarTestSupport
import Foundation
import XCTest

/// Runs the `ambar-test-helper` executable (built beside the test bundle) as a real second process.
enum HelperProcess {
    /// Runs the helper to completion (killing it after `timeout` seconds) and returns its exit
    /// status and standard error.
    @discardableResult
    static func run(_ arguments: [String], timeout: TimeInterval = 30) throws -> (status: Int32, stderr: String) {
        let result = try ProcessRunner.run(BuiltProducts.url("ambar-test-helper"), arguments, timeout: timeout)
        return (result.status, result.error)
    }
}

/// An `ambar-test-helper open` process, driven line by line. Killed when released.
final class OpenerProcess {
    let process = Process()
    private let input = Pipe(), output = Pipe()
    private lazy var reader = LineReader(output.fileHandleForReading)

    init(model: URL, store: URL) throws {
        process.executableURL = BuiltProducts.url("ambar-test-helper")
        process.arguments = ["open", model.path, store.path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The next line the process writes.
    func line() -> String { reader.next(until: Date().addingTimeInterval(30), alive: { self.process.isRunning }) ?? "nothing" }

    func send(_ command: String) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        return line()
    }
}
