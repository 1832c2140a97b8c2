import Foundation

/// A child process of the demo (this same binary), spoken to over its standard input and output
/// one line at a time. Killed when released if it still runs.
final class DemoProcess {
    let role: String
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    /// Starts this executable with `arguments`; its standard error goes to ours.
    init(role: String, arguments: [String]) throws {
        self.role = role
        process.executableURL = URL(fileURLWithPath: Self.executablePath)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// The path of the running executable.
    static var executablePath: String {
        // try?: without /proc, the path the demo was started by
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Sends one line.
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes the child's standard input (it then finishes).
    func closeInput() { try? input.fileHandleForWriting.close() }  // try?: the child may have exited and closed its end already

    /// The next line as a JSON object, waiting at most `timeout` seconds.
    func receive(timeout: TimeInterval) throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(timeout)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                // try?: the error below quotes the line
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    throw DemoFailure("the \(role) answered something unexpected: \(String(decoding: line, as: UTF8.self))")
                }
                return object
            }
            guard ContinuousClock.now < deadline else { throw DemoFailure("the \(role) did not answer within \(Int(timeout)) s") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            guard n > 0 else { throw DemoFailure("the \(role) (pid \(processIdentifier)) exited early; see its messages above") }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Waits for the child to exit (killing it after `timeout` seconds); returns its status.
    @discardableResult
    func finish(timeout: TimeInterval) -> Int32 {
        closeInput()
        let deadline = ContinuousClock.now + .seconds(timeout)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Why the demo could not finish.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
