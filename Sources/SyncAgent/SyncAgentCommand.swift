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
/// runs — Dispatch and the concurrency runtime stop the process (SIGILL) when they cannot get one,
/// before a command could say why — then runs the command.
@main
enum SyncAgentMain {
    static func main() {
        if DescriptorBudget.isShort(of: 16) {
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
