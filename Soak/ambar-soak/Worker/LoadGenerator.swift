import AmbarStack
import Foundation

/// The writes one soak process makes, one save per ``step()``.
struct LoadGenerator {
    let role: WorkerRole
    let name: String
    let keys: Int64
    let main: ManagedObjectContext
    let importer: ManagedObjectContext
    private var iteration = 0
    private var random = SystemRandomNumberGenerator()

    init(role: WorkerRole, name: String, keys: Int, stack: DataStack) throws(AmbarError) {
        self.role = role
        self.name = name
        self.keys = Int64(keys)
        main = try stack.mainContext
        importer = try stack.importerContext()
        importer.transactionAuthor = name
        main.transactionAuthor = name
    }

    /// One save of this role's kind; on failure the context it used is rolled back (and the
    /// error rethrown), so the next step starts clean.
    mutating func step() throws(AmbarError) {
        iteration += 1
        let keys = randomKeys(role == .importer ? 20 : role == .updater ? 10 : 5)
        let value = Int64.random(in: 0..<1_000_000, using: &random)
        switch role {
        case .watcher:
            return
        case .importer:
            try upsert(keys, value: value)
        case .updater where iteration % 10 == 0:
            try onImporter { () throws(AmbarError) in
                _ = try importer.batchUpdate(SoakModel.items(withKeys: keys), set: ["value": .integer(value), "writer": .string(name)])
            }
        case .updater:
            try update(keys, value: value)
        case .deleter where iteration % 2 == 0:
            try onImporter { () throws(AmbarError) in _ = try importer.batchDelete(SoakModel.items(withKeys: keys)) }
        case .deleter:
            try onImporter { () throws(AmbarError) in
                for item in try importer.fetch(SoakModel.items(withKeys: keys)) { try importer.delete(item) }
                try importer.save()
            }
        }
    }

    /// Inserts the missing keys and updates the others, in one importer save.
    private func upsert(_ keys: [Int64], value: Int64) throws(AmbarError) {
        try onImporter { () throws(AmbarError) in
            var existing: [Int64: ManagedObject] = [:]
            for item in try importer.fetch(SoakModel.items(withKeys: keys)) {
                if case .integer(let key) = try item.value(forKey: "key") { existing[key] = item }
            }
            for key in keys {
                let item: ManagedObject
                if let found = existing[key] { item = found } else { item = try importer.insertObject(entityName: SoakModel.entity) }
                try Self.write(item, key: key, value: value, writer: name)
            }
            try importer.save()
        }
    }

    /// Updates the items it finds among `keys` in the main context, and saves the main context.
    private func update(_ keys: [Int64], value: Int64) throws(AmbarError) {
        try main.performAndWait { () throws(AmbarError) in
            do throws(AmbarError) {
                for item in try main.fetch(SoakModel.items(withKeys: keys)) {
                    guard case .integer(let key) = try item.value(forKey: "key") else { continue }
                    try Self.write(item, key: key, value: value, writer: name)
                }
                try main.save()
            } catch {
                try? main.rollback()
                throw error
            }
        }
    }

    /// Runs `body` on the importer's queue; whatever happens, the importer ends empty.
    private func onImporter(_ body: () throws(AmbarError) -> Void) throws(AmbarError) {
        try importer.performAndWait { () throws(AmbarError) in
            defer { try? importer.reset() }
            try body()
        }
    }

    private static func write(_ item: ManagedObject, key: Int64, value: Int64, writer: String) throws(AmbarError) {
        let revision: Int64
        if case .integer(let r) = try item.value(forKey: "revision") { revision = r + 1 } else { revision = 1 }
        try item.setValue(.integer(key), forKey: "key")
        try item.setValue(.string("item \(key) r\(revision)"), forKey: "name")
        try item.setValue(.integer(value), forKey: "value")
        try item.setValue(.integer(revision), forKey: "revision")
        try item.setValue(.string(writer), forKey: "writer")
    }

    private mutating func randomKeys(_ count: Int) -> [Int64] {
        var chosen = Set<Int64>()
        while chosen.count < count { chosen.insert(Int64.random(in: 0..<keys, using: &random)) }
        return chosen.sorted()
    }

    /// A short name for why a save failed, for the summary.
    static func kind(of error: AmbarError) -> String {
        switch error {
        case .constraintViolation: "constraint"
        case .mergeConflict: "conflict"
        case .objectNotFound: "gone"
        case .storage(_, let code, _, _) where code & 0xff == 5 || code & 0xff == 6: "busy"
        default: "other"
        }
    }
}
