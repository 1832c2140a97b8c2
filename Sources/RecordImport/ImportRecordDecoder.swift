import AmbarCore
import Foundation

/// Turns NDJSON lines into records of one entity, type-checking each field against the model.
public struct ImportRecordDecoder {
    /// The entity the lines are records of.
    public let entityName: String
    /// The attribute that identifies an existing object to update, when upserting.
    public let keyAttribute: String?
    /// The entity's attributes, inherited ones included.
    public let attributes: [String: AttributeDescription]
    /// The entity's stored relationships, inherited ones included, by name: what a line's
    /// field of that name sets.
    public let relationships: [String: ImportRelationshipTarget]
    /// Fields a line may hold that are not imported (`--ignore`).
    public let ignoredFields: Set<String>
    /// The entity and every entity that inherits from it: the objects an import makes or
    /// updates (related objects it touches through inverses are of other entities).
    public let importedEntities: Set<String>
    private let decoder = JSONDecoder()

    /// A decoder for `entityName` of `model`, upserting by `keyAttribute` when given.
    ///
    /// - Parameters:
    ///   - relate: for each relationship named, the destination's attribute that a line's values
    ///     are (`--relate author=uid`); relationships not named take object URIs.
    ///   - ignoring: fields to leave out of every line.
    public init(
        model: ManagedObjectModel, entityName: String, keyAttribute: String?, relate: [String: String] = [:], ignoring: Set<String> = []
    ) throws(ImportSetupError) {
        guard model.entity(named: entityName) != nil else {
            throw .unknownEntity(entityName, known: model.entityNames)
        }
        let attributes = Self.allAttributes(of: entityName, in: model)
        if let keyAttribute, attributes[keyAttribute] == nil {
            throw .unknownKey(keyAttribute, entity: entityName, known: attributes.keys.sorted())
        }
        self.entityName = entityName
        self.keyAttribute = keyAttribute
        self.attributes = attributes
        self.relationships = try Self.relationshipTargets(of: entityName, in: model, relate: relate)
        self.ignoredFields = ignoring
        self.importedEntities = Set(model.entityNames.filter { model.entity(named: $0, isKindOf: entityName) })
    }

    /// The stored relationships of `entityName` (inherited ones included) and how a line names
    /// their destinations: by the attribute `relate` gives for the relationship, or by URI.
    ///
    /// - Throws: ``ImportSetupError`` when `relate` names a relationship the entity does not
    ///   have, or an attribute its destination does not have.
    public static func relationshipTargets(
        of entityName: String, in model: ManagedObjectModel, relate: [String: String]
    ) throws(ImportSetupError) -> [String: ImportRelationshipTarget] {
        var declared: [String: RelationshipDescription] = [:]
        var name: String? = entityName
        while let current = name, let entity = model.entity(named: current) {
            for relationship in entity.relationships where declared[relationship.name] == nil && !relationship.isTransient {
                declared[relationship.name] = relationship
            }
            name = entity.parent
        }
        for relationshipName in relate.keys.sorted() where declared[relationshipName] == nil {
            throw .unknownRelationship(relationshipName, entity: entityName, known: declared.keys.sorted())
        }
        var targets: [String: ImportRelationshipTarget] = [:]
        for (relationshipName, description) in declared {
            var key: AttributeDescription?
            if let keyName = relate[relationshipName] {
                let destinationAttributes = allAttributes(of: description.destination, in: model)
                guard var found = destinationAttributes[keyName] else {
                    throw .unknownRelatedKey(
                        keyName, relationship: relationshipName, destination: description.destination, known: destinationAttributes.keys.sorted())
                }
                found.isOptional = false  // a reference names an object: null is not a key
                key = found
            }
            targets[relationshipName] = ImportRelationshipTarget(
                name: relationshipName, destination: description.destination, isToMany: description.isToMany,
                isOrdered: description.isOrdered, keyAttribute: key)
        }
        return targets
    }

    /// The attributes of `entityName`, inherited ones included, by name.
    private static func allAttributes(of entityName: String, in model: ManagedObjectModel) -> [String: AttributeDescription] {
        var attributes: [String: AttributeDescription] = [:]
        var name: String? = entityName
        while let current = name, let entity = model.entity(named: current) {
            for attribute in entity.attributes where attributes[attribute.name] == nil { attributes[attribute.name] = attribute }
            name = entity.parent
        }
        return attributes
    }

    /// `--relate` arguments (`RELATIONSHIP=KEY`, each possibly a comma-separated list) as a map.
    public static func relateOptions(_ arguments: [String]) throws(ImportSetupError) -> [String: String] {
        var map: [String: String] = [:]
        for argument in arguments {
            for part in argument.split(separator: ",") {
                let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty else { throw .badRelate(String(part)) }
                map[pieces[0]] = pieces[1]
            }
        }
        return map
    }

    /// The record on `text`, line `line`.
    public func decode(_ text: Data, line: Int) throws(ImportLineError) -> ImportRecord {
        let object: [String: JSONValue]
        do {
            object = try decoder.decode([String: JSONValue].self, from: text)
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty,
            DecodingError.valueNotFound(_, let context) where context.codingPath.isEmpty
        {  // valueNotFound: the line is null
            throw ImportLineError(line: line, field: nil, reason: "expected a JSON object, one per line")
        } catch {
            throw ImportLineError(line: line, field: nil, reason: "not valid JSON (\(Self.describe(error)))")
        }
        var values: [String: AttributeValue] = [:]
        var references: [String: ImportReference] = [:]
        for (field, value) in object where !ignoredFields.contains(field) {
            guard let attribute = attributes[field] else {
                if let target = relationships[field] {
                    references[field] = try Self.reference(value, to: target, line: line)
                    continue
                }
                // The object's own URI, as `fetch --json` prints it: not imported (the store
                // gives new objects IDs of its own).
                if field == "id", case .string(let text) = value, text.hasPrefix("ambar://") { continue }
                throw ImportLineError(
                    line: line, field: field, reason: "\(entityName) has no such attribute (it has: \(attributes.keys.sorted().joined(separator: ", ")))")
            }
            if attribute.isTransient {
                throw ImportLineError(line: line, field: field, reason: "is a transient attribute (kept in memory only); import writes stored attributes only")
            }
            values[field] = try Self.convert(value, to: attribute, line: line)
        }
        var key: AttributeValue?
        if let keyAttribute {
            guard let value = values[keyAttribute], !value.isNull else {
                throw ImportLineError(line: line, field: keyAttribute, reason: "the key is missing; every line needs a value for --key \(keyAttribute)")
            }
            key = value
        }
        return ImportRecord(line: line, values: values, key: key, references: references)
    }

    /// The destinations `value` names for `target`: key values (`--relate`) or object URIs.
    static func reference(_ value: JSONValue, to target: ImportRelationshipTarget, line: Int) throws(ImportLineError) -> ImportReference {
        func one(_ item: JSONValue) throws(ImportLineError) -> AttributeValue {
            if let key = target.keyAttribute {
                do {
                    return try convert(item, to: key, line: line)
                } catch {
                    throw ImportLineError(
                        line: line, field: target.name, reason: "names \(target.destination) by its \(key.name): \(error.reason)")
                }
            }
            let advice = "to name related objects by a key attribute, pass --relate \(target.name)=KEY"
            guard case .string(let text) = item else {
                throw ImportLineError(
                    line: line, field: target.name, reason: "expected \(target.destination) object URIs (ambar://…), got \(item.shortDescription); \(advice)")
            }
            do {
                _ = try ManagedObjectID(uriString: text)
            } catch {
                throw ImportLineError(line: line, field: target.name, reason: "expected \(target.destination) object URIs: \(error.description); \(advice)")
            }
            return .string(text)
        }
        if target.isToMany {
            if case .null = value { return .many([]) }
            guard case .array(let items) = value else {
                throw ImportLineError(line: line, field: target.name, reason: "is a to-many relationship: expected an array, got \(value.shortDescription)")
            }
            var values: [AttributeValue] = []
            for item in items { values.append(try one(item)) }
            return .many(values)
        }
        if case .null = value { return .one(nil) }
        return .one(try one(value))
    }

    /// Checks that a new object gets every required attribute without a default.
    public func checkComplete(_ record: ImportRecord) throws(ImportLineError) {
        for attribute in attributes.values.sorted(by: { $0.name < $1.name })
        where !attribute.isOptional && attribute.defaultValue.isNull && (record.values[attribute.name]?.isNull ?? true) {
            throw ImportLineError(line: record.line, field: attribute.name, reason: "is required to create a new \(entityName) (not optional, no default)")
        }
    }

    /// `value` as a value of `attribute`, or the reason it is not one.
    public static func convert(_ value: JSONValue, to attribute: AttributeDescription, line: Int) throws(ImportLineError) -> AttributeValue {
        func mismatch(_ expected: String) -> ImportLineError {
            ImportLineError(line: line, field: attribute.name, reason: "expected \(expected), got \(value.shortDescription)")
        }
        if case .null = value {
            guard attribute.isOptional else {
                throw ImportLineError(line: line, field: attribute.name, reason: "is not optional; null is not allowed")
            }
            return .null
        }
        switch attribute.type {
        case .string:
            guard case .string(let text) = value else { throw mismatch("a string") }
            return .string(text)
        case .integer16, .integer32, .integer64:
            let range: ClosedRange<Int64> =
                switch attribute.type {
                case .integer16: Int64(Int16.min)...Int64(Int16.max)
                case .integer32: Int64(Int32.min)...Int64(Int32.max)
                default: Int64.min...Int64.max
                }
            let number: Int64
            switch value {
            case .integer(let n): number = n
            case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: number = Int64(d)
            default: throw mismatch("an integer")
            }
            guard range.contains(number) else { throw mismatch("an integer in \(range.lowerBound)…\(range.upperBound)") }
            return .integer(number)
        case .double, .float:
            switch value {
            case .integer(let n): return .double(Double(n))
            case .double(let d): return .double(d)
            default: throw mismatch("a number")
            }
        case .boolean:
            guard case .bool(let flag) = value else { throw mismatch("true or false") }
            return .bool(flag)
        case .date:
            switch value {
            case .integer(let n): return .date(Date(timeIntervalSince1970: TimeInterval(n)))
            case .double(let d): return .date(Date(timeIntervalSince1970: d))
            case .string(let text):
                // try?: probing the two ISO 8601 forms; a text in neither is a mismatch below
                if let date = try? Date(text, strategy: .iso8601) { return .date(date) }
                // try?: as above
                if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return .date(date) }
                throw mismatch("an ISO 8601 date (2026-11-22T10:00:00Z) or seconds since 1970")
            default: throw mismatch("an ISO 8601 date or seconds since 1970")
            }
        case .binary, .transformable:
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else { throw mismatch("base64 text") }
            return .data(data)
        case .undefined:
            throw ImportLineError(line: line, field: attribute.name, reason: "is a transient attribute; import writes stored attributes only")
        case .uuid:
            guard case .string(let text) = value, let uuid = UUID(uuidString: text) else { throw mismatch("a UUID") }
            return .uuid(uuid)
        case .uri:
            guard case .string(let text) = value, let url = URL(string: text) else { throw mismatch("a URI") }
            return .url(url)
        case .decimal:
            switch value {
            case .integer(let n): return .decimal(Decimal(n))
            case .double(let d): return .decimal(Decimal(d))
            case .string(let text):
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw mismatch("a decimal number") }
                return .decimal(decimal)
            default: throw mismatch("a decimal number")
            }
        }
    }

    private static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return (context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription
        }
        return "\(error)"
    }
}
