import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent history --after TOKEN`: the ledger.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "Print the change ledger after a token.")

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "Print transactions after this token.")
    var after: Int64 = 0

    @Option(name: .long, help: "At most this many transactions.")
    var limit: Int?

    @Flag(name: .long, help: "One JSON object per line.")
    var json = false

    func run() throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        for transaction in try stack.mainCoordinator.history(after: after, limit: limit) {
            if json {
                try JSONLine.print([
                    "token": transaction.token, "timestamp": transaction.timestamp.timeIntervalSince1970,
                    "author": transaction.author ?? NSNull(), "pid": Int(transaction.processID),
                    "instance": transaction.instanceID.map(InstanceID.text) ?? NSNull(),
                    "context": transaction.contextName ?? NSNull(),
                    "inserted": transaction.inserted.map(\.uriString).sorted(),
                    "updated": transaction.updated.map(\.uriString).sorted(),
                    "deleted": transaction.deleted.map(\.uriString).sorted(),
                ])
            } else {
                print(
                    "\(transaction.token)  \(ISO8601DateFormatter().string(from: transaction.timestamp))  pid \(transaction.processID)  \(transaction.author ?? "-")/\(transaction.contextName ?? "-")  +\(transaction.inserted.count) ~\(transaction.updated.count) -\(transaction.deleted.count)"
                )
            }
        }
    }
}
