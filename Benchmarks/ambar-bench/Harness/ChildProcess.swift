import Foundation

/// Another `ambar-bench` process in a given role, driven line by line over its stdin/stdout.
/// Killed when released.
final class ChildProcess {
    let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffer = Data()

    init(role: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [role] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line the child writes ("" when it closed its output).
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

    /// Sends a line and does not wait for an answer.
    func tell(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Sends a command and returns the answer line.
    func ask(_ command: String) -> String {
        try? input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        return line()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
