import AmbarStack
import Foundation
import RecordImport

/// Finds the objects a batch's lines name in their relationship fields and sets them: by the
/// destination's key attribute (`--relate`), looked up in batches of 500 (objects made earlier
/// in the same batch included), or by object URI. A name that finds nothing is an error of its
/// line, naming the field and the value.
struct ImportReferenceResolver {
    let context: ManagedObjectContext
    let targets: [String: ImportRelationshipTarget]
    /// Destinations found by key, per relationship.
    private var found: [String: [AttributeValue: ManagedObject]] = [:]

    init(context: ManagedObjectContext, targets: [String: ImportRelationshipTarget]) {
        self.context = context
        self.targets = targets
    }

    /// Looks up, per relationship named by key, every destination the records name.
    mutating func prefetch(_ records: [ImportRecord]) throws(ImportLineError) {
        var wanted: [String: Set<AttributeValue>] = [:]
        for record in records {
            for (name, reference) in record.references where targets[name]?.keyAttribute != nil {
                switch reference {
                case .one(let value?): wanted[name, default: []].insert(value)
                case .one(nil): break
                case .many(let values): wanted[name, default: []].formUnion(values)
                }
            }
        }
        for (name, values) in wanted {
            guard let target = targets[name], let key = target.keyAttribute else { continue }
            let all = Array(values)
            var byKey: [AttributeValue: ManagedObject] = [:]
            for start in stride(from: 0, to: all.count, by: 500) {
                var request = FetchRequest<ManagedObject>(entityName: target.destination)
                request.predicate = .isIn(key: key.name, values: Array(all[start..<min(start + 500, all.count)]), options: [])
                do {
                    for object in try context.fetch(request) {
                        let value = try object.value(forKey: key.name)
                        if let other = byKey[value], other !== object {
                            throw ImportLineError(
                                line: records.first?.line ?? 0, field: name,
                                reason:
                                    "more than one \(target.destination) has \(key.name) \(Self.describe(value)); --relate \(name)=\(key.name) needs a key that names one object"
                            )
                        }
                        byKey[value] = object
                    }
                } catch let error as ImportLineError {
                    throw error
                } catch {
                    throw ImportLineError(line: records.first?.line ?? 0, field: name, reason: "looking up \(target.destination) failed: \(error)")
                }
            }
            found[name] = byKey
        }
    }

    /// Sets the relationships `record` names on `object`.
    func apply(_ record: ImportRecord, to object: ManagedObject) throws(ImportLineError) {
        for (name, reference) in record.references.sorted(by: { $0.key < $1.key }) {
            guard let target = targets[name] else { continue }
            func destination(_ value: AttributeValue) throws(ImportLineError) -> ManagedObject {
                do throws(Unresolved) {
                    return try self.destination(value, target)
                } catch {
                    throw ImportLineError(line: record.line, field: name, reason: error.reason)
                }
            }
            let one: ManagedObject?
            var many: [ManagedObject] = []
            switch reference {
            case .one(let value): one = try value.map(destination)
            case .many(let values):
                one = nil
                for value in values { many.append(try destination(value)) }
            }
            do throws(AmbarError) {
                switch reference {
                case .one:
                    try object.setObject(one, forKey: name)
                case .many:
                    let destinations = many
                    if target.isOrdered {
                        var seen = Set<ObjectIdentifier>()
                        try object.setOrderedObjects(destinations.filter { seen.insert(ObjectIdentifier($0)).inserted }, forKey: name)
                    } else {
                        try object.setObjects(Set(destinations), forKey: name)
                    }
                }
            } catch {
                throw ImportLineError(line: record.line, field: name, reason: error.description)
            }
        }
    }

    /// Why a value names no object.
    private struct Unresolved: Error {
        let reason: String
    }

    /// The one object `value` names for `target`.
    private func destination(_ value: AttributeValue, _ target: ImportRelationshipTarget) throws(Unresolved) -> ManagedObject {
        if let key = target.keyAttribute {
            guard let object = found[target.name]?[value] else {
                throw Unresolved(reason: "no \(target.destination) has \(key.name) \(Self.describe(value))")
            }
            return object
        }
        guard case .string(let uri) = value, let id = try? ManagedObjectID(uriString: uri) else {
            throw Unresolved(reason: "\(Self.describe(value)) is not an object URI")
        }
        guard id.storeIdentifier == context.persistentStoreCoordinator.storeIdentifier else {
            throw Unresolved(reason: "\(uri) is an object of another store; name related objects by a key attribute with --relate \(target.name)=KEY")
        }
        guard let object = try? context.existingObject(with: id) else { throw Unresolved(reason: "no object at \(uri)") }
        guard isKind(object.entityName, of: target.destination) else {
            throw Unresolved(reason: "\(uri) is \(object.entityName), not \(target.destination)")
        }
        return object
    }

    /// Whether `entity` is `ancestor` or inherits from it.
    private func isKind(_ entity: String, of ancestor: String) -> Bool {
        var name: String? = entity
        while let current = name {
            if current == ancestor { return true }
            name = context.persistentStoreCoordinator.model.entity(named: current)?.parent
        }
        return false
    }

    private static func describe(_ value: AttributeValue) -> String {
        if case .string(let s) = value { return "\"\(s)\"" }
        return ObjectJSON.jsonValue(value) is NSNull ? "null" : "\(ObjectJSON.jsonValue(value))"
    }
}
