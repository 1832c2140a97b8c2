import AmbarCore
import AmbarDataStack
import Foundation

/// The demo's model and data: products with a unique SKU, and a digest of a set of products that
/// every process computes the same way, so convergence is checked, not assumed.
enum DemoModel {
    static let entity = "Product"

    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                entity,
                properties: [
                    .attribute("sku", .string, indexed: true),
                    .attribute("title", .string),
                    .attribute("price", .double, defaultValue: 0.0),
                    .attribute("stock", .integer64, defaultValue: 0),
                ], uniquenessConstraints: [["sku"]])
        ])
    }

    /// The digest of `products` (sku, title, price, stock), independent of their order.
    static func digest(_ products: [ManagedObject]) throws -> (digest: String, count: Int) {
        var rows: [String] = []
        rows.reserveCapacity(products.count)
        for product in products where !product.isDeleted {
            rows.append(
                "\(try product.value(forKey: "sku"))|\(try product.value(forKey: "title"))|\(try product.value(forKey: "price"))|\(try product.value(forKey: "stock"))"
            )
        }
        var hash = FNV1a()
        for row in rows.sorted() { hash.combine(Array(row.utf8) + [0x0A]) }
        return (hash.hex, rows.count)
    }

    /// The digest of every product in the store, read through a fresh context of `stack`.
    static func storeDigest(_ stack: DataStack) throws -> (digest: String, count: Int) {
        let context = try stack.temporaryContext()
        return try context.performAndWait { () throws -> (String, Int) in
            try digest(try context.fetch(FetchRequest<ManagedObject>(entityName: entity)))
        }
    }
}

/// Percentiles of latency samples, in milliseconds.
struct LatencySummary {
    let samples: [Double]

    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    var p50: Double { percentile(50) }
    var p99: Double { percentile(99) }
}
