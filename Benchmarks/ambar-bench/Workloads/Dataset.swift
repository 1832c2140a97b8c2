import AmbarModels
import Foundation

/// The rows every bulk workload writes (docs/benchmarks/README.md): a unique text uid, a
/// name, a double score, a 100-byte payload and an integer updated-at. Generated before any
/// timing starts.
struct Dataset {
    let count: Int
    let uids: [String]
    let names: [String]
    /// The 100-byte payload every row carries.
    static let payload = Data((0..<100).map { UInt8($0) })
    var payload: Data { Self.payload }
    /// The indices the update workload changes: random, without repeats, the same in every run.
    let updateIndices: [Int]

    init(count: Int, updates: Int) {
        self.count = count
        uids = (0..<count).map { "uid-\($0)" }
        names = (0..<count).map { "Item \($0)" }
        var generator = SplitMix64(seed: 42)
        var indices = Array(0..<count)
        for i in stride(from: indices.count - 1, to: 0, by: -1) {
            indices.swapAt(i, Int(generator.next() % UInt64(i + 1)))
        }
        updateIndices = Array(indices.prefix(min(updates, count)))
    }

    static let createTable = "CREATE TABLE item (id INTEGER PRIMARY KEY, uid TEXT UNIQUE, name TEXT, score DOUBLE, payload BLOB, updated_at INTEGER)"

    /// The model of ``DeclaredItem``, made from the class alone.
    static func declaredModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(declaring: [DeclaredItem.self])
    }

    /// The same table as an AmbarStack model.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            entities: [
                EntityDescription(
                    "Item",
                    properties: [
                        .attribute("uid", .string),
                        .attribute("name", .string),
                        .attribute("score", .double),
                        .attribute("payload", .binary),
                        .attribute("updatedAt", .integer64),
                    ], uniquenessConstraints: [["uid"]])
            ], classes: [Item.self])
    }
}

/// Imports rows `range` through `importer` the way an importer does: `batchSize` inserts, a save,
/// a reset (so memory stays flat), again. Row `i` gets `uid(i)` and `name(i)`.
func importItems<Row: BenchRow>(
    _ type: Row.Type = Item.self, into importer: ManagedObjectContext, _ range: Range<Int>, batchSize: Int,
    uid: (Int) -> String, name: (Int) -> String
) throws {
    try importer.performAndWait { () throws in
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(range.upperBound, start + batchSize)
            for i in start..<end {
                let item = try importer.insert(Row.self)
                item.uid = uid(i)
                item.name = name(i)
                item.score = Double(i)
                item.payload = Dataset.payload
                item.updatedAt = Int64(i)
            }
            try importer.save()
            try importer.reset()
            start = end
        }
    }
}

/// The first `count` rows, one insert and one save each (workload 4's shape).
func saveOneByOne(into saver: ManagedObjectContext, _ data: Dataset, count: Int) throws {
    try saver.performAndWait { () throws in
        for i in 0..<count {
            let item = try saver.insert(Item.self)
            item.uid = data.uids[i]
            item.name = data.names[i]
            item.score = Double(i)
            item.payload = data.payload
            item.updatedAt = Int64(i)
            try saver.save()
        }
    }
}

/// The same rows through ``ManagedObjectContext/batchInsert(entityName:rows:)``: straight to the
/// store, no managed objects (the ledger is still written).
func batchImportItems(
    into importer: ManagedObjectContext, _ range: Range<Int>, batchSize: Int,
    uid: (Int) -> String, name: (Int) -> String
) throws {
    try importer.performAndWait { () throws in
        for start in stride(from: range.lowerBound, to: range.upperBound, by: batchSize) {
            let rows: [[String: AttributeValue]] = (start..<min(range.upperBound, start + batchSize)).map { i in
                [
                    "uid": .string(uid(i)), "name": .string(name(i)), "score": .double(Double(i)),
                    "payload": .data(Dataset.payload), "updatedAt": .integer(Int64(i)),
                ]
            }
            _ = try importer.batchInsert(entityName: "Item", rows: rows)
        }
    }
}

/// The dataset's entity as a typed managed object.
final class Item: ManagedObject, BenchRow {
    @Managed("uid") var uid: String
    @Managed("name") var name: String
    @Managed("score") var score: Double
    @Managed("payload") var payload: Data
    @Managed("updatedAt") var updatedAt: Int64
}

/// The same row as a class that declares its entity (`@Model`): workloads 1–3 time it beside
/// `Item`, whose entity is described apart and whose properties are `@Managed`.
@Model final class DeclaredItem: ManagedObject, BenchRow {
    @Attribute(.unique) var uid: String
    var name: String
    var score: Double
    var payload: Data
    var updatedAt: Int64
}

/// A row's typed properties, whichever way its class declares them.
protocol BenchRow: ManagedObject {
    var uid: String { get set }
    var name: String { get set }
    var score: Double { get set }
    var payload: Data { get set }
    var updatedAt: Int64 { get set }
}

/// A row read back by the baselines.
struct PlainItem {
    var id: Int64, uid: String, name: String, score: Double, payload: Data, updatedAt: Int64
}

/// A small deterministic generator, so every run changes the same rows.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
