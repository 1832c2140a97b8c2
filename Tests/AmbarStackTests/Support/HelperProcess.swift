import Foundation
import XCTest

/// Runs the `ambar-test-helper` executable (built beside the test bundle) as a real second process.
enum HelperProcess {
    static var executable: URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [testBundle, testBundle.deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent()]
        for directory in candidates {
            let url = directory.appendingPathComponent("ambar-test-helper")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return testBundle.appendingPathComponent("ambar-test-helper")
    }

    /// Runs the helper to completion (killing it after `timeout` seconds) and returns its exit
    /// status and standard error.
    @discardableResult
    static func run(_ arguments: [String], timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let errorPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTFail("helper timed out: \(arguments)", file: file, line: line)
        }
        process.waitUntilExit()
        let stderr = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, stderr)
    }
}
