import AmbarStack
import Foundation

/// The one entity every soak process reads and writes: an item per key in a fixed key space, so
/// the store's size levels off while the load goes on.
enum SoakModel {
    static let entity = "Item"

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                entity,
                properties: [
                    .attribute("key", .integer64, defaultValue: 0),
                    .attribute("name", .string),
                    .attribute("value", .integer64, defaultValue: 0),
                    .attribute("revision", .integer64, defaultValue: 0),
                    .attribute("writer", .string),
                ], uniquenessConstraints: [["key"]])
        ])
    }

    /// Every item, ordered by key.
    static func allItems() -> FetchRequest<ManagedObject> {
        FetchRequest<ManagedObject>(entityName: entity, sortDescriptors: [ObjectSortDescriptor(key: "key")])
    }

    /// The items whose key is one of `keys`.
    static func items(withKeys keys: [Int64]) -> FetchRequest<ManagedObject> {
        FetchRequest<ManagedObject>(entityName: entity, predicate: Key<Int64>("key").isIn(keys))
    }

    /// The store file in a soak directory.
    /// (Named as `sync-agent` expects, so that its commands work on a soak directory.)
    static func storeURL(in directory: URL) -> URL { directory.appendingPathComponent("ambar.sqlite") }
}

/// A digest of every row: FNV-1a over "key|name|value|revision|writer" lines in key order, so
/// two processes agree on it only if they hold the same rows with the same values.
struct RowDigest: Equatable, CustomStringConvertible {
    private(set) var count = 0
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Adds one object's row (on its context's queue); objects must come in key order. Returns
    /// the row as text.
    @discardableResult
    mutating func add(_ object: ManagedObject) throws(AmbarError) -> String {
        var line = ""
        for key in ["key", "name", "value", "revision", "writer"] {
            line += Self.text(try object.value(forKey: key)) + "|"
        }
        add(line)
        return line
    }

    private mutating func add(_ line: String) {
        for byte in line.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        count += 1
    }

    private static func text(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .string(let s): s
        case .integer(let i): String(i)
        default: "\(value)"
        }
    }

    var description: String { "\(count) \(String(hash, radix: 16))" }
}
