import AmbarCore
import AmbarDataStack
import ArgumentParser
import Dispatch
import Foundation
import Logging

/// `sync-agent`: the agent systemd runs around a shared Ambar store.
struct SyncAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-agent",
        abstract: "Keeps several processes' object graphs in sync around one shared Ambar store.",
        version: SyncAgentVersion.current,
        subcommands: [
            DemoCommand.self, InitCommand.self, ImportCommand.self, RunCommand.self, WatchCommand.self, StatusCommand.self,
            HistoryCommand.self, ConsumersCommand.self, FetchCommand.self, ServeCommand.self, HubCommand.self, BackupCommand.self, RestoreCommand.self,
            DemoImporterCommand.self,
            DemoViewerCommand.self,
        ])
}

/// The entry point: checks that the process has file descriptors to spare before anything else
/// runs, then runs the command.
@main
enum SyncAgentMain {
    /// The descriptors a command must be able to open when it starts, beyond those it inherits.
    ///
    /// A running command holds up to about 24 (measured with `ls /proc/PID/fd` under load: the
    /// store's connections, two per connection and its shared-memory file, Dispatch's and the
    /// event loop's, the hub connection's), opened as it goes. Dispatch, the concurrency runtime
    /// and SwiftNIO stop the process (SIGILL) when one of theirs is refused, before a command
    /// could say why; so a limit that leaves less than twice that is refused at once, with
    /// "Too many open files" and the limit, rather than met half-way through the work.
    static let descriptorsNeeded = 48

    static func main() {
        if DescriptorBudget.isShort(of: descriptorsNeeded) {
            let error = AmbarError.tooManyOpenFiles(operation: "starting sync-agent", limit: DescriptorBudget.limit)
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            exit(71)  // EX_OSERR
        }
        Task {
            await SyncAgentCommand.main()  // exits itself on an error or --help
            exit(0)
        }
        dispatchMain()
    }
}
