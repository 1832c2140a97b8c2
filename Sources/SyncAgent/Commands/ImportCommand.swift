import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation
import Logging
import RecordImport
import SharedStoreIPC

/// `sync-agent import`: NDJSON into one entity, upserted by a key, in batches.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import NDJSON (one JSON object per line) into an entity, upserting by a key.",
        discussion: """
            Each batch is one transaction through an importer context; processes sharing the store \
            see each batch merged as it commits. A bad line is reported with its line number and \
            field. With --on-error abort (the default) nothing of the failing batch is written, \
            earlier batches stay, and the exit code is 65; with skip the bad lines are reported and \
            the rest imported. Dates are ISO 8601 text or seconds since 1970; binary is base64.

            Relationships: a field named after a relationship sets it. With --relate \
            RELATIONSHIP=KEY the field holds the related objects' values of their attribute KEY \
            ("author": "a-17" with --relate author=uid; "tags": ["x", "y"] with --relate \
            tags=name); without it, their object URIs as `fetch --json` prints them (ambar://…, \
            this store's only). A to-one takes one value or null (null clears it); a to-many an \
            array, which replaces its destinations (in the array's order for an ordered one). The \
            related objects must exist in the store or be made by a line of the same batch; a value \
            that names none, or more than one, is an error of its line naming the field and the \
            value. With --missing wait, a line naming an object that does not exist yet waits \
            instead: it is imported after the rest of the file (after the lines that follow it, \
            so a later line of the same key is applied before it), once a line has made the \
            object, and is an error only if no line of the file does. A field "id" holding an \
            object URI (what `fetch --json` prints) is not imported: the store gives new objects \
            their own IDs.

            Round trip: export each entity with `sync-agent fetch --entity E --json --relations \
            REL=KEY`, then import the files with --key and the same --relate, destinations first. \
            Where two entities point at each other (a relationship and its inverse), set one side \
            and leave the other out with --ignore: setting a relationship sets its inverse.
            """)

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions

    @Option(name: .long, help: "The entity to import into.")
    var entity: String

    @Option(name: .long, help: "The attribute to upsert by: a line whose key exists updates that object; others insert.")
    var key: String?

    @Option(name: .long, help: "Lines per transaction.")
    var batchSize = 1000

    @Option(name: .long, help: "abort (nothing of the failing batch is written, exit 65) or skip (report bad lines, import the rest).")
    var onError: String = "abort"

    @Option(name: .long, help: "RELATIONSHIP=KEY: the field RELATIONSHIP names related objects by their attribute KEY (repeatable, or comma-separated).")
    var relate: [String] = []

    @Option(
        name: .long,
        help: "error (a line naming a related object that does not exist is in error) or wait (it waits for a later line of the file to make it).")
    var missing: String = "error"

    @Option(name: .long, help: "A field to leave out of every line (repeatable).")
    var ignore: [String] = []

    @Flag(name: .long, help: "Print the summary as JSON.")
    var json = false

    @Argument(help: "The NDJSON file, or - for standard input.")
    var file: String = "-"

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be positive.") }
        guard OnError(rawValue: onError) != nil else { throw ValidationError("--on-error must be abort or skip.") }
        guard OnMissing(rawValue: missing) != nil else { throw ValidationError("--missing must be error or wait.") }
        do { _ = try ImportRecordDecoder.relateOptions(relate) } catch { throw ValidationError(error.description) }
    }

    func run() async throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let decoder = try ImportRecordDecoder(
            model: stack.model, entityName: entity, keyAttribute: key, relate: try ImportRecordDecoder.relateOptions(relate), ignoring: Set(ignore))
        let source: LineSource
        do { source = try LineSource(path: file) } catch { throw ValidationError("Cannot read \(file): \(error.localizedDescription)") }
        var importer = RecordImporter(stack: stack, decoder: decoder)
        importer.batchSize = batchSize
        importer.onError = OnError(rawValue: onError) ?? .abort
        importer.onMissing = OnMissing(rawValue: missing) ?? .error
        // Sharing announces each batch as it commits (the shared-memory bell, the hub when one
        // answers), so other processes merge it at once instead of at their next ledger check.
        // A one-shot command never serves the hub itself, and its main context shows nothing:
        // other processes' rows are not read ahead for it.
        var sharing = try socket.sharing(in: directory.url, as: "sync-agent import")
        sharing.mayServeHub = false
        sharing.readsChangedRowsAhead = false
        let sync = try await SharedStoreSync.start(stack: stack, configuration: sharing)
        let bar = ProgressBar()
        let outcome = Result {
            try importer.run(
                source,
                progress: { progress in
                    bar.update(lines: progress.lines, bytes: source.bytesRead, total: source.totalBytes)
                })
        }
        await sync.stop()
        let report = try outcome.get()
        bar.finish()
        for error in report.skipped { FileHandle.standardError.write(Data("skipped \(error)\n".utf8)) }
        if json {
            try JSONLine.print(report.json.merging(["entity": entity]) { a, _ in a })
        } else {
            let rate = Double(report.lines) / max(report.seconds, 0.001)
            let tokens =
                report.tokens.isEmpty
                ? "no transaction" : report.tokens.count == 1 ? "token \(report.tokens[0])" : "tokens \(report.tokens.first!)–\(report.tokens.last!)"
            print(
                "\(entity): \(report.inserted) inserted, \(report.updated) updated, \(report.skipped.count) skipped from \(report.lines) lines in \(String(format: "%.2f", report.seconds)) s (\(Int(rate)) lines/s; \(tokens))"
            )
        }
        if let error = report.abortedBy {
            let kept = report.tokens.isEmpty ? "nothing was imported" : "the \(report.tokens.count) earlier batch(es) stay imported"
            let lines = report.unwrittenWaiting.map(String.init).joined(separator: ", ")
            let unwritten =
                report.unwrittenWaiting.contains(error.line)
                ? "line(s) \(lines) name related objects that no line of the file made and were not written; every other line was (\(kept))."
                : "nothing from line \(report.firstUnwrittenLine ?? error.line) on was written; \(kept)."
                    + (lines.isEmpty ? "" : " Line(s) \(lines) waited for related objects and were not written either.")
            FileHandle.standardError.write(
                Data(
                    "error: \(error)\naborted: \(unwritten) Fix the line and import again (with --key the import is an upsert, safe to repeat), or pass --on-error skip.\n"
                        .utf8))
            throw ExitCode(65)
        }
    }
}
