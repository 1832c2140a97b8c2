import Foundation

/// Runs executables for multi-process tests, always within a time limit.
public enum ProcessRunner {
    /// Runs `executable` to completion (killing it after `timeout` seconds) and returns its exit
    /// status, standard output and standard error; `environment` replaces the inherited one.
    @discardableResult
    public static func run(_ executable: URL, _ arguments: [String], timeout: TimeInterval = 30, environment: [String: String]? = nil) throws -> (
        status: Int32, output: String, error: String
    ) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Drain both pipes while waiting, so a chatty child never blocks on a full pipe.
        let collected = Collected()
        let group = DispatchGroup()
        for (pipe, keyPath) in [(output, \Collected.output), (error, \Collected.error)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.set(keyPath, data)
                group.leave()
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // A grandchild the child left running (a wrapper such as faketime, killed above) may
        // hold the pipes open: what was read by then is returned, rather than waiting for ever.
        _ = group.wait(timeout: .now() + 10)
        return (process.terminationStatus, collected.text(\.output), collected.text(\.error))
    }

    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        var output = Data(), error = Data()
        func set(_ keyPath: ReferenceWritableKeyPath<Collected, Data>, _ data: Data) {
            lock.lock()
            defer { lock.unlock() }
            self[keyPath: keyPath] = data
        }
        func text(_ keyPath: KeyPath<Collected, Data>) -> String {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: self[keyPath: keyPath], as: UTF8.self)
        }
    }
}

/// Reads lines from a pipe without blocking past a deadline.
public struct LineReader {
    private let fd: CInt
    private var buffer = Data()

    /// Reads from `handle`.
    public init(_ handle: FileHandle) { fd = handle.fileDescriptor }

    /// The next line, or `nil` when none arrived before `deadline` or while `alive` holds.
    public mutating func next(until deadline: Date, alive: () -> Bool = { true }) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            guard Date() < deadline else { return nil }
            // A process that exited may still have left its last lines in the pipe: read them
            // before giving up on it.
            let running = alive()
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, running ? 50 : 0) > 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &chunk, chunk.count)
                if n > 0 { buffer.append(contentsOf: chunk[0..<n]) } else if n == 0 { return nil }
            } else if !running {
                return nil
            }
        }
    }
}
