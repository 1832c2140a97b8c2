import AmbarCore
import AmbarSQLite
import Foundation

/// Reads the project's JSON model format (see ``ModelFile``), hand-written or as the store keeps it.
enum JSONModelReader {
    static func read(_ data: Data, path: String) throws(AmbarError) -> ManagedObjectModel {
        let file: ModelDocument
        do {
            file = try JSONDecoder().decode(ModelDocument.self, from: data)
        } catch let error as DecodingError {
            throw .invalidModel("\(path): \(describe(error))")
        } catch {
            throw .invalidModel("\(path): \(error)")
        }
        return try ManagedObjectModel(entities: file.entities.map(\.description), fetchRequestTemplates: file.fetchRequests) { issue in
            "\(path): \(issue.message)"
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func at(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "" : " at \(path.hasPrefix(".") ? String(path.dropFirst()) : path)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(at(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(context.debugDescription)\(at(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(at(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// Any coding key, for reading objects whose keys are checked by hand.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// Throws when the object has a key outside `known`.
    fileprivate func rejectUnknown(_ known: Set<String>, in what: String) throws {
        for key in allKeys where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath + [key],
                    debugDescription: "unknown key \"\(key.stringValue)\" in \(what) (known: \(known.sorted().joined(separator: ", ")))"))
        }
    }

    /// The value under the first of `names` present.
    fileprivate func first<T: Decodable>(_ type: T.Type, _ names: String...) throws -> T? {
        for name in names where contains(AnyKey(name)) { return try decodeIfPresent(T.self, forKey: AnyKey(name)) }
        return nil
    }
}

private struct ModelDocument: Decodable {
    var entities: [EntityDocument]
    var fetchRequests: [FetchRequestTemplate]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectUnknown(["entities", "fetchRequests", "fetchRequestTemplates"], in: "the model")
        guard let entities = try c.first([EntityDocument].self, "entities") else {
            throw DecodingError.keyNotFound(AnyKey("entities"), .init(codingPath: [], debugDescription: "a model needs \"entities\""))
        }
        self.entities = entities
        self.fetchRequests = try c.first([FetchRequestTemplate].self, "fetchRequests", "fetchRequestTemplates") ?? []
    }
}

private struct EntityDocument: Decodable {
    var description: EntityDescription

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectUnknown(
            [
                "name", "parent", "abstract", "isAbstract", "attributes", "relationships", "unique", "uniquenessConstraints", "renamingIdentifier", "indexes",
                "fetchedProperties",
            ], in: "an entity")
        guard let name = try c.first(String.self, "name") else {
            throw DecodingError.keyNotFound(AnyKey("name"), .init(codingPath: c.codingPath, debugDescription: "an entity needs a name"))
        }
        description = EntityDescription(
            name: name, parent: try c.first(String.self, "parent"),
            isAbstract: try c.first(Bool.self, "abstract", "isAbstract") ?? false,
            attributes: (try c.first([AttributeDocument].self, "attributes") ?? []).map(\.description),
            relationships: (try c.first([RelationshipDocument].self, "relationships") ?? []).map(\.description),
            uniquenessConstraints: try c.first([[String]].self, "unique", "uniquenessConstraints") ?? [],
            renamingIdentifier: try c.first(String.self, "renamingIdentifier"),
            indexes: try c.first([[String]].self, "indexes") ?? [],
            fetchedProperties: try c.first([FetchedPropertyDescription].self, "fetchedProperties") ?? [])
    }
}

private struct AttributeDocument: Decodable {
    var description: AttributeDescription

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectUnknown(
            [
                "name", "type", "optional", "isOptional", "default", "defaultValue", "indexed", "isIndexed", "renamingIdentifier",
                "transient", "isTransient", "valueTransformerName", "customClassName", "derivation",
                "minimum", "maximum", "regularExpression", "validation", "preservesValueOnDeletion",
            ], in: "an attribute")
        guard let name = try c.first(String.self, "name") else {
            throw DecodingError.keyNotFound(AnyKey("name"), .init(codingPath: c.codingPath, debugDescription: "an attribute needs a name"))
        }
        guard let typeName = try c.first(String.self, "type") else {
            throw DecodingError.keyNotFound(AnyKey("type"), .init(codingPath: c.codingPath, debugDescription: "attribute \"\(name)\" needs a type"))
        }
        guard let type = AttributeType(rawValue: typeName) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [AnyKey("type")],
                    debugDescription:
                        "attribute \"\(name)\" has unknown type \"\(typeName)\" (known: \(AttributeType.allCases.map(\.rawValue).joined(separator: ", ")))"))
        }
        var defaultValue = AttributeValue.null
        for key in ["default", "defaultValue"] where c.contains(AnyKey(key)) {
            // try?: not the synthesized form: the plain form is decoded below, and its errors are thrown
            if let legacy = try? c.decode(AttributeValue.self, forKey: AnyKey(key)) {
                defaultValue = legacy  // the synthesized form the store keeps
            } else {
                let plain = try c.decode(PlainValue.self, forKey: AnyKey(key))
                guard let value = plain.attributeValue(for: type) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: c.codingPath + [AnyKey(key)], debugDescription: "the default of \"\(name)\" is not a \(type.rawValue)"))
                }
                defaultValue = value
            }
        }
        // Validation rules: `minimum` and `maximum` (values of numbers and dates, lengths of
        // strings and binary data) and `regularExpression`; or the stored form, `validation`.
        var validation = try c.first(AttributeValidation.self, "validation") ?? AttributeValidation()
        for key in ["minimum", "maximum"] where c.contains(AnyKey(key)) {
            let plain = try c.decode(PlainValue.self, forKey: AnyKey(key))
            let boundType: AttributeType = AttributeValidation.boundsAreLengths(type) ? .integer64 : type
            guard let value = plain.attributeValue(for: boundType), !value.isNull else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: c.codingPath + [AnyKey(key)],
                        debugDescription: "the \(key) of \"\(name)\" is not \(AttributeValidation.boundsAreLengths(type) ? "a length" : type.withArticle)"))
            }
            if key == "minimum" { validation.minimum = value } else { validation.maximum = value }
        }
        if let pattern = try c.first(String.self, "regularExpression") { validation.regularExpression = pattern }
        description = AttributeDescription(
            name: name, type: type, isOptional: try c.first(Bool.self, "optional", "isOptional") ?? false,
            defaultValue: defaultValue, isIndexed: try c.first(Bool.self, "indexed", "isIndexed") ?? false,
            renamingIdentifier: try c.first(String.self, "renamingIdentifier"),
            isTransient: try c.first(Bool.self, "transient", "isTransient") ?? false,
            valueTransformerName: try c.first(String.self, "valueTransformerName"),
            customClassName: try c.first(String.self, "customClassName"),
            derivation: try c.first(String.self, "derivation"), validation: validation,
            preservesValueOnDeletion: try c.first(Bool.self, "preservesValueOnDeletion") ?? false)
    }
}

private struct RelationshipDocument: Decodable {
    var description: RelationshipDescription

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectUnknown(
            [
                "name", "destination", "inverse", "toMany", "isToMany", "deleteRule", "optional", "isOptional", "renamingIdentifier",
                "ordered", "isOrdered", "transient", "isTransient", "minCount", "maxCount",
            ], in: "a relationship")
        guard let name = try c.first(String.self, "name"), let destination = try c.first(String.self, "destination") else {
            throw DecodingError.keyNotFound(
                AnyKey("destination"), .init(codingPath: c.codingPath, debugDescription: "a relationship needs a name and a destination"))
        }
        let ruleName = try c.first(String.self, "deleteRule") ?? "nullify"
        guard let rule = DeleteRule(rawValue: ruleName) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [AnyKey("deleteRule")],
                    debugDescription: "unknown delete rule \"\(ruleName)\" (nullify, cascade, deny, noAction)"))
        }
        description = RelationshipDescription(
            name: name, destination: destination, inverse: try c.first(String.self, "inverse"),
            isToMany: try c.first(Bool.self, "toMany", "isToMany") ?? false, deleteRule: rule,
            isOptional: try c.first(Bool.self, "optional", "isOptional") ?? true,
            renamingIdentifier: try c.first(String.self, "renamingIdentifier"),
            isOrdered: try c.first(Bool.self, "ordered", "isOrdered") ?? false,
            isTransient: try c.first(Bool.self, "transient", "isTransient") ?? false,
            minCount: try c.first(Int.self, "minCount") ?? 0, maxCount: try c.first(Int.self, "maxCount") ?? 0)
    }
}

/// A plain JSON default value, read as the attribute's type.
private enum PlainValue: Decodable {
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case null

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {  // try?: probing the kind; the last, a string, throws
            self = .bool(v)
        } else if let v = try? c.decode(Int64.self) {  // try?: as above
            self = .integer(v)
        } else if let v = try? c.decode(Double.self) {  // try?: as above
            self = .double(v)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    func attributeValue(for type: AttributeType) -> AttributeValue? {
        switch (self, type) {
        case (.null, _): return .null
        case (.string(let s), .string): return .string(s)
        case (.integer(let n), .integer16), (.integer(let n), .integer32), (.integer(let n), .integer64): return .integer(n)
        case (.integer(let n), .double), (.integer(let n), .float): return .double(Double(n))
        case (.double(let d), .double), (.double(let d), .float): return .double(d)
        case (.bool(let b), .boolean): return .bool(b)
        // try?: a text that is no ISO 8601 date is no date: the caller says the default is not one
        case (.string(let s), .date): return (try? Date(s, strategy: .iso8601)).map { .date($0) }
        case (.integer(let n), .date): return .date(Date(timeIntervalSince1970: TimeInterval(n)))
        case (.double(let d), .date): return .date(Date(timeIntervalSince1970: d))
        case (.string(let s), .binary), (.string(let s), .transformable): return Data(base64Encoded: s).map { .data($0) }
        case (.string(let s), .uuid): return UUID(uuidString: s).map { .uuid($0) }
        case (.string(let s), .uri): return URL(string: s).map { .url($0) }
        case (.integer(let n), .decimal): return .decimal(Decimal(n))
        case (.double(let d), .decimal): return .decimal(Decimal(d))
        case (.string(let s), .decimal): return Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        default: return nil
        }
    }
}
