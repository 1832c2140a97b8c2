import AmbarCore
import AmbarDataStack
import Foundation

/// How `fetch --json` and the HTTP API print an object: `id` (its URI), every stored attribute
/// (inherited ones included) by name, and every stored relationship by name — a to-one as the
/// related object's URI or `null`, a to-many as an array of URIs (in order for an ordered one,
/// sorted otherwise). Call it on the object's context queue.
enum ObjectJSON {
    /// The object's ID, stored attributes and stored relationships; a relationship named in
    /// `relatedKeys` as its destinations' values of that attribute, any other as their URIs.
    ///
    /// - Throws: the ``AmbarError`` of a value or relationship that cannot be read (a fault the
    ///   store cannot fill): an object is printed whole or not at all, never with a value missing.
    static func fields(_ object: ManagedObject, relatedKeys: [String: String] = [:]) throws(AmbarError) -> [String: Any] {
        var fields: [String: Any] = ["id": object.objectID.uriString]
        for (name, value) in try attributes(object) { fields[name] = jsonValue(value) }
        for relationship in relationships(object) {
            let name = relationship.name
            func show(_ destination: ManagedObject) throws(AmbarError) -> Any {
                guard let key = relatedKeys[name] else { return destination.objectID.uriString }
                return jsonValue(try destination.value(forKey: key))
            }
            if relationship.isToMany {
                var shown: [Any] = []
                let destinations = relationship.isOrdered ? try object.orderedObjects(forKey: name) : Array(try object.objects(forKey: name))
                for destination in destinations { shown.append(try show(destination)) }
                // Unordered: sorted by what is printed, so that the same set always prints the same.
                fields[name] = relationship.isOrdered ? shown : shown.sorted { "\($0)" < "\($1)" }
            } else {
                fields[name] = try object.object(forKey: name).map(show) ?? NSNull()
            }
        }
        return fields
    }

    /// One JSON line of ``fields(_:relatedKeys:)``, keys sorted.
    static func line(_ object: ManagedObject, relatedKeys: [String: String] = [:]) throws(AmbarError) -> String {
        let fields = try fields(object, relatedKeys: relatedKeys)
        // try?: every value above is JSON-safe (jsonValue spells non-finite numbers): it always serializes
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"id":"\#(object.objectID.uriString)"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The entity and its ancestors, root first.
    private static func chain(_ object: ManagedObject) -> [EntityDescription] {
        var chain: [EntityDescription] = []
        var entity: EntityDescription? = object.entity
        while let current = entity {
            chain.insert(current, at: 0)
            entity = current.parent.flatMap { object.managedObjectContext?.persistentStoreCoordinator.model.entity(named: $0) }
        }
        return chain
    }

    /// The stored attributes of `object` (inherited ones first), by name.
    static func attributes(_ object: ManagedObject) throws(AmbarError) -> [(String, AttributeValue)] {
        var values: [(String, AttributeValue)] = []
        for name in chain(object).flatMap({ $0.attributes.filter { !$0.isTransient }.map(\.name) }) {
            values.append((name, try object.value(forKey: name)))
        }
        return values
    }

    /// The stored relationships of `object` (inherited ones first).
    static func relationships(_ object: ManagedObject) -> [RelationshipDescription] {
        chain(object).flatMap { $0.relationships.filter { !$0.isTransient } }
    }

    static func jsonValue(_ value: AttributeValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .string(let s): return s
        case .integer(let v): return v
        case .double(let d): return d.isFinite ? d : String(d) as Any
        case .bool(let b): return b
        case .date(let d): return isoDate(d)
        case .data(let d): return d.base64EncodedString()
        case .uuid(let u): return u.uuidString
        case .url(let u): return u.absoluteString
        case .decimal(let d): return d.description
        }
    }

    static func isoDate(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        let seconds = date.timeIntervalSince1970
        if seconds.rounded() != seconds { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
        return formatter.string(from: date)
    }
}
