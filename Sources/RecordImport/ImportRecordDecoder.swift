import AmbarStack
import Foundation

/// Turns NDJSON lines into records of one entity, type-checking each field against the model.
public struct ImportRecordDecoder {
    /// The entity the lines are records of.
    public let entityName: String
    /// The attribute that identifies an existing object to update, when upserting.
    public let keyAttribute: String?
    /// The entity's attributes, inherited ones included.
    public let attributes: [String: AttributeDescription]
    /// The entity's relationship names (a line may not set them).
    public let relationships: Set<String>
    private let decoder = JSONDecoder()

    /// A decoder for `entityName` of `model`, upserting by `keyAttribute` when given.
    public init(model: ManagedObjectModel, entityName: String, keyAttribute: String?) throws(ImportSetupError) {
        guard model.entity(named: entityName) != nil else {
            throw .unknownEntity(entityName, known: model.entityNames)
        }
        var attributes: [String: AttributeDescription] = [:]
        var relationships = Set<String>()
        var name: String? = entityName
        while let current = name, let entity = model.entity(named: current) {
            for attribute in entity.attributes where attributes[attribute.name] == nil { attributes[attribute.name] = attribute }
            for relationship in entity.relationships { relationships.insert(relationship.name) }
            name = entity.parent
        }
        if let keyAttribute, attributes[keyAttribute] == nil {
            throw .unknownKey(keyAttribute, entity: entityName, known: attributes.keys.sorted())
        }
        self.entityName = entityName
        self.keyAttribute = keyAttribute
        self.attributes = attributes
        self.relationships = relationships
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
        for (field, value) in object {
            guard let attribute = attributes[field] else {
                if relationships.contains(field) {
                    throw ImportLineError(line: line, field: field, reason: "is a relationship; import sets attributes only")
                }
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
        return ImportRecord(line: line, values: values, key: key)
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
                if let date = try? Date(text, strategy: .iso8601) { return .date(date) }
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
