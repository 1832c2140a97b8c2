import Foundation

/// A `sync-agent` child process (the one built beside this benchmark), its standard error kept in
/// a file. Stopped (SIGTERM, then SIGKILL) by ``stop()`` and when released.
final class SyncAgentProcess {
    let process = Process()
    let log: URL

    /// The `sync-agent` beside this executable.
    static func binary() throws -> URL {
        let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("sync-agent")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw BenchError("no sync-agent beside ambar-bench (\(url.path)): build it too (swift build -c release --product sync-agent)")
        }
        return url
    }

    /// Runs `binary` with `arguments` to its end; its exit status.
    static func run(_ binary: URL, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    init(_ binary: URL, _ arguments: [String]) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-bench-agent-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
    }

    /// The port in the "listening on HOST:PORT" line serve writes once it listens (waited for, up
    /// to 30 s).
    func port() throws -> Int {
        let deadline = now() + 30_000_000_000
        while now() < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"listening on \S+:\d+\n"#, options: .regularExpression),
                let port = Int(text[range].dropLast().split(separator: ":").last ?? "")
            {
                return port
            }
            guard process.isRunning else { throw BenchError("sync-agent ended before it listened: \(text)") }
            usleep(20_000)
        }
        throw BenchError("sync-agent did not listen within 30 s")
    }

    /// Its resident memory (VmRSS), in bytes.
    func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw BenchError("no VmRSS for process \(process.processIdentifier)") }
        return kilobytes * 1024
    }

    /// SIGTERM, then SIGKILL if it has not ended within 10 s; removes the log.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = now() + 10_000_000_000
            while process.isRunning, now() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: log)
    }

    deinit { stop() }
}
