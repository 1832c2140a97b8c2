import ArgumentParser
import Logging

/// `sync-agent`: the agent systemd runs around a shared Ambar store.
@main
struct SyncAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-agent",
        abstract: "Keeps several processes' object graphs in sync around one shared Ambar store.",
        subcommands: [
            DemoCommand.self, InitCommand.self, ImportCommand.self, RunCommand.self, WatchCommand.self, StatusCommand.self,
            HistoryCommand.self, ConsumersCommand.self, FetchCommand.self, ServeCommand.self, HubCommand.self, BackupCommand.self, DemoImporterCommand.self,
            DemoViewerCommand.self,
        ])
}
