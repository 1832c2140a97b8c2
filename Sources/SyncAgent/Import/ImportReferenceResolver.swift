import AmbarCore
import AmbarDataStack
import Foundation
import RecordImport

/// Finds the objects a batch's lines name in their relationship fields and sets them: by the
/// destination's key attribute (`--relate`), looked up in batches of 500 (objects made anywhere
/// in the same batch included), or by object URI. A name that finds nothing is an error of its
/// line (``ImportLineError``, inside ``MissingReference`` when no object has it yet), naming the
/// field and the value; a store that fails while looking is not the line's fault, and its
/// ``AmbarError`` is thrown as it is.
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
    mutating func prefetch(_ records: [ImportRecord]) throws {
        var wanted: [String: (values: Set<AttributeValue>, firstLine: Int)] = [:]
        for record in records {
            for (name, reference) in record.references where targets[name]?.keyAttribute != nil {
                let values: [AttributeValue]
                switch reference {
                case .one(let value): values = value.map { [$0] } ?? []
                case .many(let many): values = many
                }
                wanted[name, default: ([], record.line)].values.formUnion(values)
            }
        }
        for (name, (values, firstLine)) in wanted {
            guard let target = targets[name], let key = target.keyAttribute else { continue }
            let all = Array(values)
            var byKey: [AttributeValue: ManagedObject] = [:]
            for start in stride(from: 0, to: all.count, by: 500) {
                var request = FetchRequest<ManagedObject>(entityName: target.destination)
                request.predicate = .isIn(key: key.name, values: Array(all[start..<min(start + 500, all.count)]), options: [])
                for object in try context.fetch(request) {
                    let value = try object.value(forKey: key.name)
                    if let other = byKey[value], other !== object {
                        throw ImportLineError(
                            line: firstLine, field: name,
                            reason:
                                "more than one \(target.destination) has \(key.name) \(Self.describe(value)); --relate \(name)=\(key.name) needs a key that names one object"
                        )
                    }
                    byKey[value] = object
                }
            }
            found[name] = byKey
        }
    }

    /// Sets the relationships `record` names on `object`.
    func apply(_ record: ImportRecord, to object: ManagedObject) throws {
        for (name, reference) in record.references.sorted(by: { $0.key < $1.key }) {
            guard let target = targets[name] else { continue }
            func destination(_ value: AttributeValue) throws -> ManagedObject {
                do {
                    return try self.destination(value, target)
                } catch let unresolved as Unresolved {
                    let error = ImportLineError(line: record.line, field: name, reason: unresolved.reason)
                    throw unresolved.isMissing ? MissingReference(error: error) : error
                }
            }
            do {
                switch reference {
                case .one(let value):
                    try object.setObject(try value.map(destination), forKey: name)
                case .many(let values):
                    let destinations = try values.map(destination)
                    if target.isOrdered {
                        var seen = Set<ObjectIdentifier>()
                        try object.setOrderedObjects(destinations.filter { seen.insert(ObjectIdentifier($0)).inserted }, forKey: name)
                    } else {
                        try object.setObjects(Set(destinations), forKey: name)
                    }
                }
            } catch let error as AmbarError where RecordImporter.isDataError(error) {
                throw ImportLineError(line: record.line, field: name, reason: error.description)
            }
        }
    }

    /// Why a value names no object: the line's fault. `isMissing` when it is well-formed but
    /// no object has it (yet): a later line could make one.
    private struct Unresolved: Error {
        let reason: String
        var isMissing = false
    }

    /// A line names an object that does not exist (yet): its error, which an import that waits
    /// for later lines (`--missing wait`) holds back until the end of the file.
    struct MissingReference: Error {
        let error: ImportLineError
    }

    /// The one object `value` names for `target`. Throws ``Unresolved`` when it names none, and
    /// the store's ``AmbarError`` when reading fails.
    private func destination(_ value: AttributeValue, _ target: ImportRelationshipTarget) throws -> ManagedObject {
        if let key = target.keyAttribute {
            guard let object = found[target.name]?[value] else {
                throw Unresolved(reason: "no \(target.destination) has \(key.name) \(Self.describe(value))", isMissing: true)
            }
            return object
        }
        guard case .string(let uri) = value else { throw Unresolved(reason: "\(Self.describe(value)) is not an object URI") }
        let id = try ManagedObjectID(uriString: uri)
        guard id.storeIdentifier == context.persistentStoreCoordinator.storeIdentifier else {
            throw Unresolved(reason: "\(uri) is an object of another store; name related objects by a key attribute with --relate \(target.name)=KEY")
        }
        guard context.persistentStoreCoordinator.model.entity(named: id.entityName, isKindOf: target.destination) else {
            throw Unresolved(reason: "\(uri) is \(id.entityName), not \(target.destination)")
        }
        do throws(AmbarError) {
            return try context.existingObject(with: id)
        } catch .objectNotFound {
            throw Unresolved(reason: "no object at \(uri)", isMissing: true)
        }
    }

    private static func describe(_ value: AttributeValue) -> String {
        if case .string(let s) = value { return "\"\(s)\"" }
        return ObjectJSON.jsonValue(value) is NSNull ? "null" : "\(ObjectJSON.jsonValue(value))"
    }
}
