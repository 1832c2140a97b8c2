import Foundation

/// The `sync-agent` built beside `ambar-soak`, which the month's drivers run.
enum SyncAgentBinary {
    /// Its path in `executableDirectory`; a clear failure when it was not built.
    static func path(in executableDirectory: URL) throws -> String {
        let path = executableDirectory.appendingPathComponent("sync-agent").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw SoakFailure("no sync-agent beside ambar-soak (\(path)); build it: swift build --product sync-agent")
        }
        return path
    }
}
