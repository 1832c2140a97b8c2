import AmbarPostgres
import AmbarStack
import Foundation
import PostgresNIO
import SharedStoreIPC

/// Workloads 10 and 11: AmbarStack on a PostgreSQL store beside postgres-nio doing the same work
/// on the same server in the same run — import, fetch, update by uid, one-row saves (10), and a
/// commit until merged in another process's main context against LISTEN/NOTIFY + SELECT (11).
/// Each repetition uses fresh databases, dropped afterwards.
struct PostgresWorkloads {
    /// The server (any database on it; the workloads make their own).
    let server: URL
    let data: Dataset
    let repetitions: Int
    let batchSize: Int
    let smallSaves: Int
    let crossProcessSaves: Int
    let receivers: Int

    private typealias Timings = [String: Double]

    /// Lookups of one object by uid in the fetch figures.
    private var lookups: Int { min(smallSaves, data.count) }

    func run(into report: inout Report) async throws {
        let admin = try RawPostgres(server)
        var databases: [String] = []
        func freshDatabase(_ role: String) throws -> URL {
            let name = "bench_\(role)_\(getpid())_\(databases.count)"
            try admin.query("DROP DATABASE IF EXISTS \(name)")
            try admin.query("CREATE DATABASE \(name) ENCODING 'UTF8'")
            databases.append(name)
            return RawPostgres.url(server, database: name)
        }
        defer { for name in databases { _ = try? admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") } }

        let model = try Dataset.model()
        var runs: [Timings] = []
        for repetition in 0..<repetitions {
            progress("PostgreSQL bulk workloads, repetition \(repetition + 1) of \(repetitions)")
            var t: Timings = [:]
            let raw = try RawPostgres(try freshDatabase("raw"))
            try raw.query(
                "CREATE TABLE item (id bigserial PRIMARY KEY, uid text COLLATE \"C\" UNIQUE, name text, score double precision, payload bytea, updated_at bigint)"
            )
            t["import.raw"] = try seconds { try rawImport(raw) }
            let coordinator = try PersistentStoreCoordinator(model: model, store: .postgres(try freshDatabase("ambar")))
            let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "importer")
            t["import.ambar"] = try seconds {
                try importItems(into: importer, 0..<data.count, batchSize: batchSize, uid: { data.uids[$0] }, name: { data.names[$0] })
            }

            var fetched = 0
            t["fetch.raw"] = try seconds { fetched = try rawFetch(raw).count }
            guard fetched == data.count else { throw BenchError("the raw fetch read \(fetched) rows, not \(data.count)") }
            let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "reader")
            t["fetch.ambar"] = try reader.performAndWait { () throws -> Double in
                try seconds {
                    var request = FetchRequest<Item>()
                    request.returnsObjectsAsFaults = false
                    fetched = try reader.fetch(request).count
                }
            }
            guard fetched == data.count else { throw BenchError("AmbarStack fetched \(fetched) rows, not \(data.count)") }

            // One object by uid at a time, as a program looking things up does: what each
            // statement costs beyond its rows (parsing and planning, the round trip).
            t["lookup.raw"] = try seconds {
                for i in 0..<lookups {
                    var binds = PostgresBindings()
                    binds.append(data.uids[i])
                    let rows = try raw.query("SELECT id, uid, name, score, payload, updated_at FROM item WHERE uid = $1", binds).rows
                    guard rows.count == 1 else { throw BenchError("the raw lookup of \(data.uids[i]) read \(rows.count) rows") }
                }
            }
            let looker = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "looker")
            t["lookup.ambar"] = try looker.performAndWait { () throws -> Double in
                try seconds {
                    for i in 0..<lookups {
                        var request = FetchRequest<Item>(predicate: Key<String>("uid") == data.uids[i])
                        request.returnsObjectsAsFaults = false
                        let found = try looker.fetch(request)
                        guard found.count == 1 else { throw BenchError("AmbarStack's lookup of \(data.uids[i]) fetched \(found.count) objects") }
                    }
                }
            }

            t["update.raw"] = try seconds { try rawUpdate(raw) }
            let uids = data.updateIndices.map { data.uids[$0] }
            let editor = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "editor")
            t["update.ambar"] = try editor.performAndWait { () throws -> Double in
                try seconds {
                    let items = try editor.fetch(FetchRequest<Item>(predicate: Key<String>("uid").isIn(uids)))
                    guard items.count == uids.count else { throw BenchError("the update fetched \(items.count) of \(uids.count)") }
                    for item in items {
                        item.score = -item.score
                        item.updatedAt = -item.updatedAt
                    }
                    try editor.save()
                }
            }

            let rawSmall = try RawPostgres(try freshDatabase("rawsmall"))
            try rawSmall.query(
                "CREATE TABLE item (id bigserial PRIMARY KEY, uid text COLLATE \"C\" UNIQUE, name text, score double precision, payload bytea, updated_at bigint)"
            )
            t["small.raw"] = try seconds {
                for i in 0..<smallSaves {
                    var binds = PostgresBindings()
                    binds.append(data.uids[i])
                    binds.append(data.names[i])
                    binds.append(Double(i))
                    binds.append(ByteBuffer(bytes: data.payload))
                    binds.append(Int64(i))
                    try rawSmall.query("INSERT INTO item (uid, name, score, payload, updated_at) VALUES ($1, $2, $3, $4, $5)", binds)
                }
            }
            let smallCoordinator = try PersistentStoreCoordinator(model: model, store: .postgres(try freshDatabase("small")))
            let saver = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: smallCoordinator, name: "saver")
            t["small.ambar"] = try seconds { try saveOneByOne(into: saver, data, count: smallSaves) }
            runs.append(t)
        }

        let n = Double(data.count)
        let u = Double(data.updateIndices.count)
        let s = Double(smallSaves)
        let l = Double(lookups)
        func rate(_ key: String, _ rows: Double) -> Double { median(runs.map { rows / $0[key]! }) }
        func ratio(_ key: String, against baseline: String) -> Double { median(runs.map { $0[baseline]! / $0[key]! }) }
        func figure(_ approach: String, _ key: String, _ rows: Double, unit: String = "rows/s", against baseline: String? = nil) -> Figure {
            Figure(
                approach: approach, value: rate(key, rows), unit: unit,
                ratio: baseline.map { ratio(key, against: $0) }, ratioAgainst: baseline.map { _ in "postgres-nio" })
        }
        report.results.append(
            WorkloadResult(
                number: 10, title: "PostgreSQL: import, fetch, update, small saves",
                figures: [
                    figure("AmbarStack importer context, batches of \(batchSize), ledger and NOTIFY included", "import.ambar", n, against: "import.raw"),
                    figure("postgres-nio, multi-row INSERT of \(Self.rawBatch) rows, one transaction", "import.raw", n),
                    figure("AmbarStack, all as objects", "fetch.ambar", n, against: "fetch.raw"),
                    figure("postgres-nio, SELECT * into structs", "fetch.raw", n),
                    figure("AmbarStack: fetch one object by uid; \(lookups) times", "lookup.ambar", l, unit: "fetches/s", against: "lookup.raw"),
                    figure("postgres-nio, SELECT … WHERE uid = $1 per lookup", "lookup.raw", l, unit: "fetches/s"),
                    figure("AmbarStack: fetch \(Int(u)) by uid, change, save", "update.ambar", u, against: "update.raw"),
                    figure("postgres-nio, UPDATE … WHERE uid = $1 per row, one transaction", "update.raw", u),
                    figure("AmbarStack: insert one object, save; \(smallSaves) times", "small.ambar", s, unit: "saves/s", against: "small.raw"),
                    figure("postgres-nio, autocommit INSERT", "small.raw", s, unit: "saves/s"),
                ],
                target: "import and one-object saves ≥ 0.60× postgres-nio",
                met: ratio("import.ambar", against: "import.raw") >= 0.6 && ratio("small.ambar", against: "small.raw") >= 0.6,
                note: "the same server, loopback TCP, fsync as the server is configured; every AmbarStack save also writes the ledger and sends NOTIFY"))

        progress("PostgreSQL cross-process: \(receivers) AmbarStack receiver(s), \(crossProcessSaves) saves")
        let ambar = try await ambarLatencies(try freshDatabase("xproc"))
        progress("PostgreSQL cross-process: \(receivers) raw receiver(s), \(crossProcessSaves) saves")
        let raw = try rawLatencies(try freshDatabase("xraw"))
        let a = (percentile(ambar, 0.5) / 1000, percentile(ambar, 0.99) / 1000)
        let r = (percentile(raw, 0.5) / 1000, percentile(raw, 0.99) / 1000)
        report.results.append(
            WorkloadResult(
                number: 11, title: "PostgreSQL: commit → merged in another process",
                figures: [
                    Figure(
                        approach: "AmbarStack, \(receivers) receiver(s) on another host directory: p50", value: a.0, unit: "µs", ratio: a.0 / r.0,
                        ratioAgainst: "raw p50"),
                    Figure(
                        approach: "AmbarStack, \(receivers) receiver(s) on another host directory: p99", value: a.1, unit: "µs", ratio: a.1 / r.1,
                        ratioAgainst: "raw p99"),
                    Figure(approach: "postgres-nio UPDATE + NOTIFY, LISTEN + SELECT, \(receivers) receiver(s): p50", value: r.0, unit: "µs"),
                    Figure(approach: "postgres-nio UPDATE + NOTIFY, LISTEN + SELECT, \(receivers) receiver(s): p99", value: r.1, unit: "µs"),
                ],
                target: "p50 ≤ 1.5× postgres-nio LISTEN/NOTIFY + SELECT", met: a.0 <= 1.5 * r.0,
                note:
                    "from the publisher's CLOCK_MONOTONIC just before its save to the object refreshed in each receiver's main context (AmbarStack: through the receivers' host hub, which holds the LISTEN), or to the row read after the notification (baseline); \(crossProcessSaves) saves, 2 ms apart"
            ))
    }

    static let rawBatch = 1_000

    private func rawImport(_ raw: RawPostgres) throws {
        try raw.query("BEGIN")
        for start in stride(from: 0, to: data.count, by: Self.rawBatch) {
            let end = min(data.count, start + Self.rawBatch)
            var binds = PostgresBindings(capacity: (end - start) * 5)
            var tuples: [String] = []
            for i in start..<end {
                let p = binds.count
                tuples.append("($\(p + 1), $\(p + 2), $\(p + 3), $\(p + 4), $\(p + 5))")
                binds.append(data.uids[i])
                binds.append(data.names[i])
                binds.append(Double(i))
                binds.append(ByteBuffer(bytes: data.payload))
                binds.append(Int64(i))
            }
            try raw.query("INSERT INTO item (uid, name, score, payload, updated_at) VALUES " + tuples.joined(separator: ", "), binds)
        }
        try raw.query("COMMIT")
    }

    private func rawFetch(_ raw: RawPostgres) throws -> [PlainItem] {
        try raw.query("SELECT id, uid, name, score, payload, updated_at FROM item").rows.map { row in
            let (id, uid, name, score, payload, updatedAt) = try row.decode((Int64, String, String, Double, ByteBuffer, Int64).self)
            return PlainItem(id: id, uid: uid, name: name, score: score, payload: Data(payload.readableBytesView), updatedAt: updatedAt)
        }
    }

    private func rawUpdate(_ raw: RawPostgres) throws {
        try raw.query("BEGIN")
        for i in data.updateIndices {
            var binds = PostgresBindings()
            binds.append(-Double(i))
            binds.append(-Int64(i))
            binds.append(data.uids[i])
            try raw.query("UPDATE item SET score = $1, updated_at = $2 WHERE uid = $3", binds)
        }
        try raw.query("COMMIT")
    }

    private func ambarLatencies(_ url: URL) async throws -> [Int64] {
        let publisherHost = try ScratchDirectory("pg-publisher")
        let receiverHost = try ScratchDirectory("pg-receivers")
        defer {
            publisherHost.remove()
            receiverHost.remove()
        }
        let stack = try DataStack.open(storeType: .postgres(url), model: .model(try CrossProcessRoles.model()), name: "bench")
        let importer = try stack.importerContext()
        try importer.performAndWait { () throws(AmbarError) in
            _ = try importer.batchInsert(entityName: "Stamp", rows: (0..<100).map { ["uid": .string("s\($0)")] })
        }
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(publisherHost.url))
        let children = try (0..<receivers).map { _ in try ChildProcess(role: "pg-receiver", [receiverHost.url.path, url.absoluteString]) }
        for child in children { _ = child.line() }
        let latencies = try await publishStamps(importer: importer, to: children, saves: crossProcessSaves)
        await sync.stop()
        return latencies
    }

    private func rawLatencies(_ url: URL) throws -> [Int64] {
        let raw = try RawPostgres(url)
        try raw.query("CREATE TABLE stamp (id bigint PRIMARY KEY, stamp bigint NOT NULL)")
        try raw.query("INSERT INTO stamp (id, stamp) SELECT g, 0 FROM generate_series(1, 100) AS g")
        let children = try (0..<receivers).map { _ in try ChildProcess(role: "pg-raw-receiver", [url.absoluteString]) }
        for child in children { _ = child.line() }
        func save(_ n: Int) throws {
            let id = Int64(n % 100 + 1)
            var binds = PostgresBindings()
            binds.append(now())
            binds.append(id)
            try raw.query("BEGIN")
            try raw.query("UPDATE stamp SET stamp = $1 WHERE id = $2", binds)
            var notify = PostgresBindings()
            notify.append(String(id))
            try raw.query("SELECT pg_notify('bench_raw', $1)", notify)
            try raw.query("COMMIT")
        }
        for n in 0..<min(50, crossProcessSaves) {
            try save(n)
            usleep(2_000)
        }
        let warm = Date().addingTimeInterval(30)
        while Date() < warm, !children.allSatisfy({ Int($0.ask("count")) ?? 0 >= min(50, crossProcessSaves) }) { usleep(10_000) }
        for child in children { _ = child.ask("reset") }
        for n in 0..<crossProcessSaves {
            try save(n)
            usleep(2_000)
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !children.allSatisfy({ Int($0.ask("count")) ?? 0 >= crossProcessSaves }) { usleep(10_000) }
        let counts = children.map { Int($0.ask("count")) ?? 0 }
        guard counts.allSatisfy({ $0 >= crossProcessSaves }) else {
            throw BenchError("the raw receivers did not see \(crossProcessSaves) notifications within 60 s (\(counts))")
        }
        var all: [Int64] = []
        for child in children { all += child.ask("report").split(separator: " ").compactMap { Int64($0) } }
        for child in children { _ = child.ask("quit") }
        return all.sorted()
    }
}

extension CrossProcessRoles {
    /// An AmbarStack process on the PostgreSQL store, sharing `directory` with the other
    /// receivers (their host hub holds the LISTEN): a latency when a remote save's object is
    /// refreshed in its main context.
    static func postgresReceiver(directory: URL, store: URL) throws -> Never {
        let stack = try DataStack.open(storeType: .postgres(store), model: .model(try model()), name: "bench")
        try receive(stack: stack, directory: directory)
    }

    /// LISTEN on the baseline's channel; on each notification, SELECT the row it names.
    static func rawPostgresReceiver(store: URL) throws -> Never {
        let latencies = Recorder()
        let ready = DispatchSemaphore(value: 0)
        Task.detached {
            let listener = try RawPostgres(store)
            let reader = try RawPostgres(store)
            try await listener.connection.listen(on: "bench_raw") { notifications in
                ready.signal()
                for try await notification in notifications {
                    var binds = PostgresBindings()
                    binds.append(Int64(notification.payload) ?? 0)
                    let rows = try await reader.connection.query(
                        PostgresQuery(unsafeSQL: "SELECT stamp FROM stamp WHERE id = $1", binds: binds), logger: RawPostgres.logger)
                    for try await stamp in rows.decode(Int64.self) {
                        let t = now()
                        latencies.values.withLock { $0.append(t - stamp) }
                    }
                }
            }
        }
        ready.wait()
        say("ready")
        serve(latencies: latencies)
    }
}
