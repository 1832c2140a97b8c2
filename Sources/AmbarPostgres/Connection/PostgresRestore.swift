import AmbarCore
import Foundation
import Logging

/// Restores a store on PostgreSQL from an archive `sync-agent backup` (`pg_dump --format=custom`)
/// wrote, while other processes keep it open (see
/// ``AmbarDataStack/DataStack/restoreStore(on:from:model:allowingAnotherStore:)``).
///
/// The steps: the archive is checked (`pg_restore --list`; its `ambar_metadata` names an Ambar
/// store, the same one unless told otherwise). Then one `psql --single-transaction` runs three
/// scripts: the prologue takes every table of the store's schema (`ACCESS EXCLUSIVE`, with
/// `NOWAIT` tried again until all are free at once, so that it never waits holding some of them:
/// no deadlock with a writer) and keeps what describes the running processes — the ledger's head,
/// each primary-key sequence, the consumers' positions, ownership leases and standbys; then
/// `pg_restore --clean --if-exists`'s script replaces every object of the archive; the epilogue
/// moves the ledger's head and purge point one past the old head, no sequence behind where it
/// was, and puts the positions, leases and standbys back. Either all of it commits or nothing
/// changes. Finally the model opens the restored store (migrating it if needed) and a marker
/// transaction is recorded, which rings every sharing process's bell.
enum PostgresRestore {
    static let logger = Logger(label: "ambar.store")
    /// How long the prologue tries to take every table before it gives up.
    static let lockWait = 30

    /// What the archive holds, read without restoring it.
    struct Archive {
        let storeUUID: String
        let head: Int64
    }

    static func restore(
        _ url: PostgresURL, from archive: URL, model: ManagedObjectModel, allowingAnotherStore: Bool
    ) throws(AmbarError) -> PostgresRestoreReport {
        let archive = archive.standardizedFileURL
        guard FileManager.default.fileExists(atPath: archive.path) else { throw .invalidArgument("no backup at \(archive.path)") }
        let purpose = "restoring a PostgreSQL store"
        let pgRestore = try PostgresClientTools.tool("pg_restore", for: purpose)
        let psql = try PostgresClientTools.tool("psql", for: purpose)
        let environment = PostgresClientTools.environment(for: url, purpose: "restore")

        // 1. The archive, checked; the store it would replace, read.
        let contents = try read(archive, with: pgRestore, environment)
        let live = try PostgresConnector(url: url).openStore(model: model)
        let liveUUID = live.identifier
        live.close()
        if contents.storeUUID != liveUUID, !allowingAnotherStore {
            throw .invalidArgument(
                "the backup \(archive.path) is another store (UUID \(contents.storeUUID)) than the one at \(url.description) (UUID \(liveUUID)); nothing was changed. Restore a backup of this store, or allow another store explicitly"
            )
        }

        // 2. One transaction: every table taken, the archive restored, the ledger moved past the old head.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-restore-\(getpid())-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storage(operation: "restore", code: 0, message: "cannot create \(work.path): \(error.localizedDescription)", cause: ErrorCause(error))
        }
        defer { try? FileManager.default.removeItem(at: work) }  // try?: cleanup of scripts already run
        let prologue = work.appendingPathComponent("prologue.sql")
        let script = work.appendingPathComponent("restore.sql")
        let epilogue = work.appendingPathComponent("epilogue.sql")
        do {
            try Data(prologueSQL.utf8).write(to: prologue)
            try Data(epilogueSQL.utf8).write(to: epilogue)
        } catch {
            throw .storage(
                operation: "restore", code: 0, message: "cannot write the restore's scripts in \(work.path): \(error.localizedDescription)",
                cause: ErrorCause(error))
        }
        let scripted = PostgresClientTools.run(
            pgRestore, ["--clean", "--if-exists", "--no-owner", "--no-privileges", "--file=\(script.path)", archive.path], environment)
        guard scripted.status == 0 else {
            throw .storeCannotOpen(path: archive.path, reason: "pg_restore cannot read it: \(scripted.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let ran = PostgresClientTools.run(
            psql,
            [
                "--no-psqlrc", "--quiet", "--tuples-only", "--no-align", "--set=ON_ERROR_STOP=1", "--single-transaction", "-f", prologue.path, "-f",
                script.path, "-f", epilogue.path,
            ],
            environment)
        guard ran.status == 0,
            let line = ran.output.split(separator: "\n").first(where: { $0.hasPrefix("ambar-restore|") }),
            case let fields = line.split(separator: "|"), fields.count == 3,
            let replacedHead = Int64(fields[1]), let boundary = Int64(fields[2])
        else {
            let reason = ran.error.trimmingCharacters(in: .whitespacesAndNewlines)
            if reason.contains("ambar-restore: busy") {
                throw .storage(
                    operation: "restore", code: 0,
                    message:
                        "the store's tables were never all free at once within \(lockWait) s (other processes kept writing or reading); nothing was changed. Try again, or stop the writers first"
                )
            }
            throw .serverUnavailable(
                server: url.description, operation: "restore (psql)",
                reason: "nothing was changed (the restore is one transaction): " + (reason.isEmpty ? "psql printed \(ran.output.suffix(300))" : reason))
        }

        // 3. The model opens it (migrating it if needed); a marker rings every process's bell.
        let restored = try PostgresConnector(url: url).openStore(model: model)
        defer { restored.close() }
        let marker = try restored.recordMarker(contextName: "restore from \(archive.lastPathComponent)")
        logger.notice(
            "restored the store from a backup",
            metadata: ["store": "\(url.description)", "backup": "\(archive.path)", "boundary": "\(boundary)", "marker": "\(marker)"])
        return PostgresRestoreReport(
            server: url.description, backup: archive, storeUUID: contents.storeUUID, backupHead: contents.head, replacedHead: replacedHead, markerToken: marker)
    }

    /// The archive's store UUID and ledger head, from its `ambar_metadata` and
    /// `ambar_ledger_head` data (`pg_restore --data-only` to standard output: nothing is restored).
    static func read(_ archive: URL, with pgRestore: URL, _ environment: [String: String]) throws(AmbarError) -> Archive {
        let listed = PostgresClientTools.run(pgRestore, ["--list", archive.path], environment)
        guard listed.status == 0 else {
            throw .storeCannotOpen(
                path: archive.path,
                reason:
                    "not an archive sync-agent backup wrote for a PostgreSQL store (pg_restore --list: \(listed.error.trimmingCharacters(in: .whitespacesAndNewlines)))"
            )
        }
        // Each table's data entry ("TABLE DATA <schema> <table> <owner>").
        let missing = ["ambar_metadata", "ambar_ledger_head", "ambar_transactions"].filter { table in
            !listed.output.split(separator: "\n").contains { $0.contains(" TABLE DATA ") && $0.contains(" \(table) ") }
        }
        guard missing.isEmpty else {
            throw .storeCannotOpen(
                path: archive.path, reason: "a pg_dump archive, but not of an Ambar store (no data for \(missing.joined(separator: ", ")))")
        }
        let metadata = try copyRows(of: "ambar_metadata", archive, pgRestore, environment)
        let head = try copyRows(of: "ambar_ledger_head", archive, pgRestore, environment)
        guard let uuid = metadata.first(where: { $0.first == "store_uuid" })?.last, !uuid.isEmpty else {
            throw .storeCannotOpen(path: archive.path, reason: "a pg_dump archive of Ambar's tables, but its ambar_metadata names no store UUID")
        }
        guard let token = head.first.flatMap({ $0.count == 2 ? Int64($0[1]) : nil }) else {
            throw .storeCannotOpen(path: archive.path, reason: "a pg_dump archive of Ambar's tables, but its ambar_ledger_head has no row")
        }
        return Archive(storeUUID: uuid, head: token)
    }

    /// The rows of `table`'s `COPY … FROM stdin` data in the archive, split on tabs.
    private static func copyRows(of table: String, _ archive: URL, _ pgRestore: URL, _ environment: [String: String]) throws(AmbarError) -> [[String]] {
        let dumped = PostgresClientTools.run(pgRestore, ["--data-only", "--table=\(table)", "--file=-", archive.path], environment)
        guard dumped.status == 0 else {
            throw .storeCannotOpen(
                path: archive.path,
                reason: "pg_restore cannot read its \(table) data: \(dumped.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        var rows: [[String]] = []
        var inData = false
        for line in dumped.output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("COPY ") && line.hasSuffix("FROM stdin;") {
                inData = true
            } else if inData && line == "\\." {
                inData = false
            } else if inData {
                rows.append(line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init))
            }
        }
        return rows
    }

    /// Takes every table of the store's schema and keeps what describes the running processes.
    static let prologueSQL = """
        SET LOCAL statement_timeout = 0;
        DO $ambar$
        DECLARE
            tables text;
            started timestamptz := clock_timestamp();
        BEGIN
            SELECT string_agg(format('%I.%I', schemaname, tablename), ', ' ORDER BY tablename = 'ambar_ledger_head', tablename)
                INTO tables FROM pg_tables WHERE schemaname = current_schema();
            LOOP
                BEGIN
                    EXECUTE 'LOCK TABLE ' || tables || ' IN ACCESS EXCLUSIVE MODE NOWAIT';
                    EXIT;
                EXCEPTION WHEN lock_not_available THEN
                    IF clock_timestamp() - started > interval '\(lockWait) seconds' THEN
                        RAISE EXCEPTION 'ambar-restore: busy';
                    END IF;
                    PERFORM pg_sleep(0.02);
                END;
            END LOOP;
        END
        $ambar$;
        CREATE TEMP TABLE ambar_restore_state ON COMMIT DROP AS
            SELECT current_schema() AS schema, (SELECT token FROM ambar_ledger_head WHERE id = 1) AS head;
        CREATE TEMP TABLE ambar_restore_sequences ON COMMIT DROP AS
            SELECT sequencename AS name, last_value FROM pg_sequences WHERE schemaname = current_schema() AND last_value IS NOT NULL;
        CREATE TEMP TABLE ambar_restore_cursors ON COMMIT DROP AS SELECT consumer, token, last_seen, lease FROM ambar_cursors;
        CREATE TEMP TABLE ambar_restore_owners ON COMMIT DROP AS SELECT consumer, owner, epoch, expires FROM ambar_consumer_owners;
        CREATE TEMP TABLE ambar_restore_standbys ON COMMIT DROP AS SELECT consumer, owner, expires FROM ambar_consumer_standbys;

        """

    /// Moves the restored ledger past the old head and puts back what describes the running
    /// processes; prints `ambar-restore|OLD HEAD|BOUNDARY`.
    static let epilogueSQL = """
        SELECT pg_catalog.set_config('search_path', format('%I', (SELECT schema FROM pg_temp.ambar_restore_state)), true);
        UPDATE ambar_ledger_head SET token = greatest(token, (SELECT head + 1 FROM pg_temp.ambar_restore_state)) WHERE id = 1;
        UPDATE ambar_metadata SET value = greatest(value::bigint, (SELECT head + 1 FROM pg_temp.ambar_restore_state))::text
            WHERE key = 'history_purged_through';
        SELECT setval(format('%I.%I', s.schema, q.name)::regclass, greatest(q.last_value, coalesce(n.last_value, 1)), true)
            FROM pg_temp.ambar_restore_sequences q
            CROSS JOIN pg_temp.ambar_restore_state s
            LEFT JOIN pg_sequences n ON n.schemaname = s.schema AND n.sequencename = q.name
            WHERE EXISTS (SELECT 1 FROM pg_sequences e WHERE e.schemaname = s.schema AND e.sequencename = q.name);
        DELETE FROM ambar_cursors;
        INSERT INTO ambar_cursors (consumer, token, last_seen, lease) SELECT consumer, token, last_seen, lease FROM pg_temp.ambar_restore_cursors;
        DELETE FROM ambar_consumer_owners;
        INSERT INTO ambar_consumer_owners (consumer, owner, epoch, expires) SELECT consumer, owner, epoch, expires FROM pg_temp.ambar_restore_owners;
        DELETE FROM ambar_consumer_standbys;
        INSERT INTO ambar_consumer_standbys (consumer, owner, expires) SELECT consumer, owner, expires FROM pg_temp.ambar_restore_standbys;
        SELECT 'ambar-restore|' || (SELECT head FROM pg_temp.ambar_restore_state) || '|' || (SELECT head + 1 FROM pg_temp.ambar_restore_state);

        """
}
