import Foundation

/// A child process started with posix_spawn(3) and reaped with waitpid(2).
///
/// Foundation's `Process` watches its children through a descriptor the child inherits; a program
/// that closes inherited descriptors and execs another (systemd-socket-activate does) makes it
/// believe the child exited and block in wait4(2), stalling every other `Process`. Tests use this
/// type for such programs. Killed with SIGKILL when released if still running.
public final class SpawnedProcess {
    /// The child's process ID.
    public let processIdentifier: pid_t
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments`; standard output and error go to `log` (or /dev/null).
    public init(_ executable: String, _ arguments: [String], log: URL? = nil, environment: [String: String] = [:]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let target = log?.path ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, target, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, target, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(.init(rawValue: result) ?? .EIO) }
        processIdentifier = pid
    }

    deinit {
        if isRunning {
            kill(processIdentifier, SIGKILL)
            _ = waitForExit(timeout: 10)
        }
    }

    /// Whether the child still runs (reaping it if it ended).
    public var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier {
            exitStatus = status
            return false
        }
        return true
    }

    /// Waits for the child to end; returns its raw wait status (see ``exitCode(_:)``), or `nil`
    /// if it still runs after `timeout` seconds.
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            guard Date() < deadline else { return nil }
            usleep(10_000)
        }
        return exitStatus
    }

    /// The exit code in a raw wait status, or `nil` if the process was killed by a signal.
    public static func exitCode(_ status: Int32) -> Int32? {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
    }
}
