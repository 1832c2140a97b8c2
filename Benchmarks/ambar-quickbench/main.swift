// ambar-quickbench: 100,000 new objects saved in one save and fetched back, through AmbarStack
// and through raw GRDB statements on the same table shape, in the same run.
//
//   swift run -c release ambar-quickbench [rows] [repetitions]
import AmbarStack
import Foundation
import GRDB

let rows = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
let repetitions = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 3 : 3
let payload = Data((0..<100).map { UInt8($0) })

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func freshDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-quickbench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

let model = try ManagedObjectModel(entities: [
    EntityDescription("Item", properties: [
        .attribute("uid", .string),
        .attribute("name", .string),
        .attribute("score", .double),
        .attribute("payload", .binary),
        .attribute("updatedAt", .integer64),
    ], uniquenessConstraints: [["uid"]]),
])

final class Item: ManagedObject {
    @Managed("uid") var uid: String
    @Managed("name") var name: String
    @Managed("score") var score: Double
    @Managed("payload") var payload: Data
    @Managed("updatedAt") var updatedAt: Int64
}

struct PlainItem {
    var id: Int64, uid: String, name: String, score: Double, payload: Data, updatedAt: Int64
}

func ambarRun() throws -> (insert: Double, fetch: Double) {
    let directory = try freshDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let typed = try model.registering([Item.self])
    let coordinator = try PersistentStoreCoordinator(model: typed, store: .sqlite(directory.appendingPathComponent("a.sqlite")))
    let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    let insert = try importer.performAndWait { () throws -> Double in
        try seconds {
            for i in 0..<rows {
                let item = try importer.insert(Item.self)
                item.uid = "uid-\(i)"
                item.name = "Item \(i)"
                item.score = Double(i)
                item.payload = payload
                item.updatedAt = Int64(i)
            }
            try importer.save()
        }
    }
    let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    let fetch = try reader.performAndWait { () throws -> Double in
        var request = FetchRequest<Item>()
        request.returnsObjectsAsFaults = false
        var total = 0.0
        let t = try seconds {
            for item in try reader.fetch(request) { total += item.score }
        }
        precondition(total > 0)
        return t
    }
    return (insert, fetch)
}

func grdbRun() throws -> (insert: Double, fetch: Double) {
    let directory = try freshDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
    let pool = try DatabasePool(path: directory.appendingPathComponent("g.sqlite").path, configuration: configuration)
    try pool.write { db in
        try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, uid TEXT UNIQUE, name TEXT, score DOUBLE, payload BLOB, updatedAt INTEGER)")
    }
    let insert = try seconds {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO item (id, uid, name, score, payload, updatedAt) VALUES (?, ?, ?, ?, ?, ?)")
            for i in 0..<rows {
                statement.setUncheckedArguments([Int64(i + 1), "uid-\(i)", "Item \(i)", Double(i), payload, Int64(i)])
                try statement.execute()
            }
        }
    }
    var total = 0.0
    let fetch = try seconds {
        try pool.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, uid, name, score, payload, updatedAt FROM item")
            var items: [PlainItem] = []
            while let row = try cursor.next() {
                items.append(PlainItem(id: row[0], uid: row[1], name: row[2], score: row[3], payload: row[4], updatedAt: row[5]))
            }
            for item in items { total += item.score }
        }
    }
    precondition(total > 0)
    return (insert, fetch)
}

print("ambar-quickbench: \(rows) rows, median of \(repetitions) (release build, WAL, synchronous=NORMAL)")
var a: [(Double, Double)] = [], g: [(Double, Double)] = []
for _ in 0..<repetitions {
    g.append(try grdbRun())
    a.append(try ambarRun())
}
let rate = { (t: Double) in Double(rows) / t }
let ai = median(a.map(\.0)), af = median(a.map(\.1)), gi = median(g.map(\.0)), gf = median(g.map(\.1))
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
print(pad("workload", 34) + pad("AmbarStack", 16) + pad("GRDB statement", 16) + "ratio")
print(pad("insert, one save (incl. commit)", 34) + pad(String(format: "%.0f r/s", rate(ai)), 16) + pad(String(format: "%.0f r/s", rate(gi)), 16) + String(format: "%.2fx", rate(ai) / rate(gi)))
print(pad("fetch all as objects", 34) + pad(String(format: "%.0f r/s", rate(af)), 16) + pad(String(format: "%.0f r/s", rate(gf)), 16) + String(format: "%.2fx", rate(af) / rate(gf)))
