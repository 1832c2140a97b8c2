import AmbarStack
import AmbarSwiftData
import Foundation
import GRDBSQLite

/// Workloads 1–4: import, fetch, update and small saves, through AmbarStack and through the raw C
/// API and GRDB on the same table, each repetition on fresh files in the same run.
struct BulkWorkloads {
    let data: Dataset
    let repetitions: Int
    let batchSize: Int
    let smallSaves: Int

    /// Timings (seconds) of one repetition, by approach.
    private typealias Timings = [String: Double]

    func run(into report: inout Report) async throws {
        let model = try Dataset.model()
        var runs: [Timings] = []
        for repetition in 0..<repetitions {
            progress("bulk workloads, repetition \(repetition + 1) of \(repetitions)")
            let scratch = try ScratchDirectory("bulk")
            defer { scratch.remove() }
            var t: Timings = [:]

            // 1. Import into fresh files.
            let raw = try RawDatabase(path: scratch.file("raw.sqlite").path)
            try raw.exec(Dataset.createTable)
            t["import.raw"] = try seconds {
                try raw.exec("BEGIN IMMEDIATE")
                try raw.insert(data, 0..<data.count)
                try raw.exec("COMMIT")
            }
            let grdb = try GRDBBaseline(path: scratch.file("grdb.sqlite").path)
            try grdb.createTable()
            t["import.grdb"] = try seconds { try grdb.insertWithStatement(data) }
            let records = try GRDBBaseline(path: scratch.file("records.sqlite").path)
            try records.createTable()
            t["import.records"] = try seconds { try records.insertRecords(data) }
            let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(scratch.file("ambar.sqlite")))
            let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "importer")
            t["import.ambar"] = try seconds {
                try importItems(into: importer, 0..<data.count, batchSize: batchSize, uid: { data.uids[$0] }, name: { data.names[$0] })
            }
            let declaredCoordinator = try PersistentStoreCoordinator(model: try Dataset.declaredModel(), store: .sqlite(scratch.file("ambar-declared.sqlite")))
            let declaredImporter = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: declaredCoordinator, name: "declared importer")
            t["import.declared"] = try seconds {
                try importItems(
                    DeclaredItem.self, into: declaredImporter, 0..<data.count, batchSize: batchSize, uid: { data.uids[$0] }, name: { data.names[$0] })
            }
            let swiftDataContainer = try ModelContainer(
                for: SwiftDataItem.self, configurations: ModelConfiguration(url: scratch.file("ambar-swiftdata.store")))
            let swiftDataImporter = SwiftDataBench(modelContainer: swiftDataContainer)
            t["import.swiftdata"] = try await secondsAwaiting { try await swiftDataImporter.importItems(data, 0..<data.count, batchSize: batchSize) }
            let batchCoordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(scratch.file("ambar-batch.sqlite")))
            let batchImporter = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: batchCoordinator, name: "batch importer")
            t["import.batch"] = try seconds {
                try batchImportItems(into: batchImporter, 0..<data.count, batchSize: batchSize, uid: { data.uids[$0] }, name: { data.names[$0] })
            }

            // 2. Fetch everything back. Each approach reads everything once untimed first (its
            // connection's page cache and the allocator's memory warm for all alike); AmbarStack's
            // untimed first read, the first after its import, is reported on its own.
            _ = try raw.fetchAll()
            var fetched = 0
            t["fetch.raw"] = try seconds { fetched = try raw.fetchAll().count }
            precondition(fetched == data.count)
            _ = try grdb.fetchWithCursor()
            t["fetch.grdb"] = try seconds { fetched = try grdb.fetchWithCursor().count }
            precondition(fetched == data.count)
            _ = try grdb.fetchRecords()
            t["fetch.records"] = try seconds { fetched = try grdb.fetchRecords().count }
            precondition(fetched == data.count)
            t["fetch.first"] = try fetchAmbar(Item.self, coordinator, asFaults: false)
            t["fetch.objects"] = try fetchAmbar(Item.self, coordinator, asFaults: false)
            t["fetch.faults"] = try fetchAmbar(Item.self, coordinator, asFaults: true)
            _ = try fetchAmbar(DeclaredItem.self, declaredCoordinator, asFaults: false)
            t["fetch.declared"] = try fetchAmbar(DeclaredItem.self, declaredCoordinator, asFaults: false)
            _ = try await SwiftDataBench(modelContainer: swiftDataContainer).fetchAll()
            let swiftDataReader = SwiftDataBench(modelContainer: swiftDataContainer)
            var read = (0, 0.0)
            t["fetch.swiftdata"] = try await secondsAwaiting { read = try await swiftDataReader.fetchAll() }
            precondition(read.0 == data.count && read.1 != 0)

            // 3. Update random rows by uid.
            t["update.raw"] = try seconds { try raw.update(data, data.updateIndices) }
            t["update.grdb"] = try seconds { try grdb.update(data, data.updateIndices) }
            t["update.ambar"] = try updateAmbar(Item.self, coordinator)
            t["update.declared"] = try updateAmbar(DeclaredItem.self, declaredCoordinator)
            let swiftDataEditor = SwiftDataBench(modelContainer: swiftDataContainer)
            let uids = data.updateIndices.map { data.uids[$0] }
            var updated = 0
            t["update.swiftdata"] = try await secondsAwaiting { updated = try await swiftDataEditor.update(uids) }
            precondition(updated == uids.count)

            // 4. Small saves into fresh files.
            let rawSmall = try RawDatabase(path: scratch.file("raw-small.sqlite").path)
            try rawSmall.exec(Dataset.createTable)
            t["small.raw"] = try seconds {
                for i in 0..<smallSaves { try rawSmall.insert(data, i..<(i + 1)) }  // autocommit
            }
            let grdbSmall = try GRDBBaseline(path: scratch.file("grdb-small.sqlite").path)
            try grdbSmall.createTable()
            t["small.grdb"] = try seconds { try grdbSmall.smallSaves(data, count: smallSaves) }
            let smallCoordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(scratch.file("ambar-small.sqlite")))
            let saver = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: smallCoordinator, name: "saver")
            t["small.ambar"] = try seconds { try saveOneByOne(into: saver, data, count: smallSaves) }
            runs.append(t)
        }

        let n = Double(data.count)
        let u = Double(data.updateIndices.count)
        let s = Double(smallSaves)
        /// Rows per second: the median over repetitions, and the median of the per-repetition ratios.
        func rate(_ key: String, _ rows: Double) -> Double { median(runs.map { rows / $0[key]! }) }
        func ratio(_ key: String, against baseline: String) -> Double { median(runs.map { $0[baseline]! / $0[key]! }) }
        func figure(_ approach: String, _ key: String, _ rows: Double, unit: String = "rows/s", against baseline: (key: String, name: String)? = nil) -> Figure
        {
            Figure(
                approach: approach, value: rate(key, rows), unit: unit,
                ratio: baseline.map { ratio(key, against: $0.key) }, ratioAgainst: baseline?.name)
        }

        let importRatio = ratio("import.ambar", against: "import.raw")
        report.results.append(
            WorkloadResult(
                number: 1, title: "Import",
                figures: [
                    figure("AmbarStack importer context, batches of \(batchSize), ledger included", "import.ambar", n, against: ("import.raw", "raw")),
                    figure("AmbarStack batchInsert (no objects), batches of \(batchSize), ledger included", "import.batch", n, against: ("import.raw", "raw")),
                    figure("AmbarStack @Model class, same importer", "import.declared", n, against: ("import.ambar", "the @Managed class")),
                    figure(
                        "AmbarSwiftData @Model (SwiftData's API), a @ModelActor importer", "import.swiftdata", n,
                        against: ("import.declared", "the AmbarModels @Model class")),
                    figure("raw SQLite C API, prepared statement, one transaction", "import.raw", n),
                    figure("GRDB cached statement, one transaction", "import.grdb", n, against: ("import.raw", "raw")),
                    figure("GRDB Codable record insert, one transaction", "import.records", n, against: ("import.raw", "raw")),
                ],
                target: "≥ 0.60× raw", met: importRatio >= 0.6))
        let fetchRatio = ratio("fetch.objects", against: "fetch.raw")
        report.results.append(
            WorkloadResult(
                number: 2, title: "Fetch",
                figures: [
                    figure("AmbarStack, all as objects (values loaded)", "fetch.objects", n, against: ("fetch.raw", "raw")),
                    figure("AmbarStack, all as faults", "fetch.faults", n, against: ("fetch.raw", "raw")),
                    figure("AmbarStack, all as objects, the first read after the import", "fetch.first", n, against: ("fetch.raw", "raw")),
                    figure("AmbarStack @Model class, all as objects", "fetch.declared", n, against: ("fetch.objects", "the @Managed class")),
                    figure(
                        "AmbarSwiftData @Model, FetchDescriptor in a @ModelActor", "fetch.swiftdata", n,
                        against: ("fetch.declared", "the AmbarModels @Model class")),
                    figure("raw SQLite C API, stepped into structs", "fetch.raw", n),
                    figure("GRDB row cursor into structs", "fetch.grdb", n, against: ("fetch.raw", "raw")),
                    figure("GRDB Codable fetchAll", "fetch.records", n, against: ("fetch.raw", "raw")),
                ],
                target: "objects ≥ 0.60× raw", met: fetchRatio >= 0.6))
        let updateRatio = ratio("update.ambar", against: "update.raw")
        report.results.append(
            WorkloadResult(
                number: 3, title: "Update",
                figures: [
                    figure("AmbarStack: fetch \(Int(u)) by uid, change, save", "update.ambar", u, against: ("update.raw", "raw")),
                    figure("AmbarStack @Model class, the same", "update.declared", u, against: ("update.ambar", "the @Managed class")),
                    figure(
                        "AmbarSwiftData @Model, #Predicate fetch in a @ModelActor", "update.swiftdata", u,
                        against: ("update.declared", "the AmbarModels @Model class")),
                    figure("raw SQLite C API, UPDATE … WHERE uid = ?, one transaction", "update.raw", u),
                    figure("GRDB cached statement, same SQL", "update.grdb", u, against: ("update.raw", "raw")),
                ],
                target: "≥ 0.80× raw", met: updateRatio >= 0.8))
        let smallRatio = ratio("small.ambar", against: "small.raw")
        report.results.append(
            WorkloadResult(
                number: 4, title: "Small saves",
                figures: [
                    figure("AmbarStack: insert one object, save; \(smallSaves) times", "small.ambar", s, unit: "saves/s", against: ("small.raw", "raw")),
                    figure("raw SQLite C API, autocommit INSERT", "small.raw", s, unit: "saves/s"),
                    figure("GRDB write { } per row", "small.grdb", s, unit: "saves/s", against: ("small.raw", "raw")),
                ],
                target: "≥ 0.70× raw", met: smallRatio >= 0.7))
    }

    /// Fetches the update workload's rows by uid, changes two properties of each and saves.
    private func updateAmbar<Row: BenchRow>(_ type: Row.Type, _ coordinator: PersistentStoreCoordinator) throws -> Double {
        let uids = data.updateIndices.map { data.uids[$0] }
        let editor = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "editor")
        return try editor.performAndWait { () throws -> Double in
            try seconds {
                let items = try editor.fetch(FetchRequest<Row>(predicate: Key<String>("uid").isIn(uids)))
                precondition(items.count == uids.count)
                for item in items {
                    item.score = -item.score
                    item.updatedAt = -item.updatedAt
                }
                try editor.save()
            }
        }
    }

    private func fetchAmbar<Row: BenchRow>(_ type: Row.Type, _ coordinator: PersistentStoreCoordinator, asFaults: Bool) throws -> Double {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "reader")
        return try context.performAndWait { () throws -> Double in
            var request = FetchRequest<Row>()
            request.returnsObjectsAsFaults = asFaults
            var total = 0.0
            let time = try seconds {
                let items = try context.fetch(request)
                precondition(items.count == data.count)
                if !asFaults { for item in items { total += item.score } }
            }
            precondition(asFaults || total != 0)
            return time
        }
    }
}
