import ArgumentParser

/// `ambar-soak`: the chaos soak (see `scripts/run-soak` and docs/soak.md).
struct SoakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ambar-soak",
        abstract: "Several processes on one store under load while a chaos loop kills and freezes them; then checks that they agree.",
        subcommands: [ChaosRunCommand.self, WorkerCommand.self],
        defaultSubcommand: ChaosRunCommand.self)
}

SoakCommand.main()
