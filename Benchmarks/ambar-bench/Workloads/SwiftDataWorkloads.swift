import AmbarSwiftData
import Foundation

/// The dataset's row as SwiftData code declares it (`AmbarSwiftData`'s `@Model`, qualified:
/// this module also imports `AmbarModels`, whose `@Model` is Ambar's own).
@AmbarSwiftData.Model final class SwiftDataItem {
    @AmbarSwiftData.Attribute(.unique) var uid: String
    var name: String
    var score: Double
    var payload: Data
    var updatedAt: Int64

    init(uid: String, name: String, score: Double, payload: Data, updatedAt: Int64) {
        self.uid = uid
        self.name = name
        self.score = score
        self.payload = payload
        self.updatedAt = updatedAt
    }
}

/// Workloads 1–3 through the SwiftData layer, as SwiftData code writes them: a `@ModelActor`
/// importer inserts models and saves in batches, a fetch reads every model, an update fetches by
/// uid with `#Predicate`, changes two properties of each and saves. Timed beside the same work
/// through the `@Model` managed-object class (`DeclaredItem`), which the issue bounds them by.
@ModelActor actor SwiftDataBench {
    /// Imports rows `range`, `batchSize` models per save.
    func importItems(_ data: Dataset, _ range: Range<Int>, batchSize: Int) throws {
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(range.upperBound, start + batchSize)
            for i in start..<end {
                modelContext.insert(
                    SwiftDataItem(uid: data.uids[i], name: data.names[i], score: Double(i), payload: Dataset.payload, updatedAt: Int64(i)))
            }
            try modelContext.save()
            start = end
        }
    }

    /// Fetches every model and sums a property of each; the count and the sum.
    func fetchAll() throws -> (Int, Double) {
        let items = try modelContext.fetch(FetchDescriptor<SwiftDataItem>())
        var total = 0.0
        for item in items { total += item.score }
        return (items.count, total)
    }

    /// Fetches the models of `uids`, changes two properties of each and saves; how many.
    func update(_ uids: [String]) throws -> Int {
        let items = try modelContext.fetch(FetchDescriptor<SwiftDataItem>(predicate: #Predicate { uids.contains($0.uid) }))
        for item in items {
            item.score = -item.score
            item.updatedAt = -item.updatedAt
        }
        try modelContext.save()
        return items.count
    }
}
