import AmbarCore
import AmbarSQLite
import Foundation
import Logging

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads Core Data's model XML (the `contents` file of an `.xcdatamodel`), in the spellings of
/// every Xcode version: entities with their parent and abstractness; attributes with type,
/// optionality, default, index, transient, derivation and transformer; relationships with
/// destination, inverse, cardinality (`toMany`, or the older `maxCount`), count limits, ordering,
/// transience and delete rule; uniqueness constraints; fetch indexes (`<fetchIndex>`, several
/// elements and relationships included) and the older `<compoundIndexes>`; fetched properties;
/// fetch request templates; renaming identifiers (Xcode's "Renaming ID", kept as `elementID`).
///
/// Configurations are accepted and ignored (one store holds every entity); layout (`elements`)
/// and `userInfo` are ignored, except a fetched property's (its predicate reads it as
/// `$FETCHED_PROPERTY.userInfo.KEY`). Anything else is an error naming the element and the line where it
/// opens, never a silent skip.
enum CoreDataModelReader {
    static let logger = Logger(label: "ambar.model")

    static func read(_ data: Data, path: String) throws(AmbarError) -> ManagedObjectModel {
        let parser = XMLParser(data: data)
        let builder = ModelXMLBuilder(path: path)
        parser.delegate = builder
        let parsed = parser.parse()
        if let failure = builder.failure { throw failure }
        guard parsed else {
            let message = parser.parserError.map { "\($0.localizedDescription)" } ?? "unreadable XML"
            throw .invalidModel("\(path):\(parser.lineNumber): not a Core Data model: \(message)")
        }
        guard builder.sawModel else { throw .invalidModel("\(path): no <model> element; is this an .xcdatamodel's contents file?") }
        let model = try ManagedObjectModel(entities: builder.entities, fetchRequestTemplates: builder.templates) { issue in
            "\(path):\(builder.line(of: issue)): \(issue.message)"
        }
        return model
    }

    /// Core Data's attribute type names.
    static let types: [String: AttributeType] = [
        "String": .string, "Integer 16": .integer16, "Integer 32": .integer32, "Integer 64": .integer64,
        "Double": .double, "Float": .float, "Boolean": .boolean, "Date": .date, "Binary": .binary,
        "UUID": .uuid, "URI": .uri, "Decimal": .decimal, "Transformable": .transformable, "Undefined": .undefined,
    ]

    static let deleteRules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]

    /// The attribute's default, read as Core Data reads `defaultValueString`, or `nil` when Core
    /// Data could not read it either.
    /// A reason a rule of the file cannot be read, for the reader's error.
    struct RuleProblem: Error {
        let message: String
    }

    /// The attribute's validation rules: `minValueString`/`maxValueString` (values of numbers,
    /// lengths of strings and binary data), `minDateTimeInterval`/`maxDateTimeInterval` (dates,
    /// seconds since 2001) and `regularExpressionString`. Empty texts mean no rule, as in Xcode.
    static func validation(_ a: [String: String], type: AttributeType) throws(RuleProblem) -> AttributeValidation {
        func bound(_ key: String) throws(RuleProblem) -> AttributeValue? {
            let dateKey = key == "min" ? "minDateTimeInterval" : "maxDateTimeInterval"
            let valueKey = key == "min" ? "minValueString" : "maxValueString"
            if type == .date {
                guard let text = a[dateKey]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
                guard let seconds = Double(text) else { throw RuleProblem(message: "\(dateKey) \"\(text)\" is not a number of seconds") }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            guard let text = a[valueKey]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            if AttributeValidation.boundsAreLengths(type) {
                guard let length = Int64(text) else { throw RuleProblem(message: "\(valueKey) \"\(text)\" is not a length") }
                return .integer(length)
            }
            guard let value = defaultValue(["defaultValueString": text], type: type), !value.isNull else {
                throw RuleProblem(message: "\(valueKey) \"\(text)\" cannot be read as \(type.withArticle)")
            }
            return value
        }
        var rules = AttributeValidation()
        rules.minimum = try bound("min")
        rules.maximum = try bound("max")
        if type == .string, let pattern = a["regularExpressionString"], !pattern.isEmpty { rules.regularExpression = pattern }
        return rules
    }

    static func defaultValue(_ a: [String: String], type: AttributeType) -> AttributeValue? {
        if type == .date {
            guard let interval = a["defaultDateTimeInterval"] else { return .null }
            return Double(interval).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        }
        guard let text = a["defaultValueString"] else { return .null }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let flag: Bool? = ["yes": true, "no": false, "true": true, "false": false][trimmed.lowercased()]
        switch type {
        case .string: return .string(text)
        case .integer16, .integer32, .integer64:
            let number: Int64?
            if let flag {
                number = flag ? 1 : 0
            } else if let n = Int64(trimmed) {
                number = n
            } else if let d = Double(trimmed), d.isFinite, abs(d) < 9.2e18 {
                number = Int64(d.rounded(.towardZero))
            } else {
                number = nil
            }
            guard let number, AttributeValue.integer(number).isCompatible(with: type) else { return nil }
            return .integer(number)
        case .double, .float:
            if let flag { return .double(flag ? 1 : 0) }
            return Double(trimmed).map { .double($0) }
        case .boolean:
            if let flag { return .bool(flag) }
            return Double(trimmed).map { .bool($0 != 0) }
        case .decimal:
            if let flag { return .decimal(flag ? 1 : 0) }
            return Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case .uuid: return trimmed.isEmpty ? .null : UUID(uuidString: trimmed).map { .uuid($0) }
        case .uri: return trimmed.isEmpty ? .null : URL(string: trimmed).map { .url($0) }
        case .binary, .transformable, .undefined: return trimmed.isEmpty ? .null : nil
        case .date: return nil
        }
    }

    /// Core Data's count limits: absent, 0 or negative mean none.
    static func count(_ text: String?) -> Int { max(0, text.flatMap { Int($0) } ?? 0) }
}

/// Builds entities while the parser walks the XML, remembering where each element opens.
private final class ModelXMLBuilder: NSObject, XMLParserDelegate {
    let path: String
    var entities: [EntityDescription] = []
    var templates: [FetchRequestTemplate] = []
    var failure: AmbarError?
    var sawModel = false
    private var current: EntityDescription?
    private var constraint: [String]?
    private var index: (name: String, line: Int, properties: [String])?
    private var fetchedProperty: (name: String, line: Int)?
    /// The `<userInfo>` entries of the fetched property being read.
    private var fetchedUserInfo: [String: String] = [:]
    private var ignoredDepth = 0
    /// Where each element opens: entity name → line, and entity → property → line.
    private var entityLines: [String: Int] = [:]
    private var propertyLines: [String: [String: Int]] = [:]
    private var templateLines: [String: Int] = [:]

    init(path: String) { self.path = path }

    /// The line of the element a model issue is about.
    func line(of issue: ModelIssue) -> Int {
        if let entity = issue.entity {
            if let property = issue.property, let line = propertyLines[entity]?[property] { return line }
            return entityLines[entity] ?? 0
        }
        if let property = issue.property, let line = templateLines[property] { return line }
        return 0
    }

    private func fail(_ parser: XMLParser, line: Int? = nil, _ message: String) {
        guard failure == nil else { return }
        failure = .invalidModel("\(path):\(line ?? parser.lineNumber): \(message)")
        parser.abortParsing()
    }

    private func remember(_ property: String, _ line: Int) {
        guard let entity = current?.name else { return }
        if propertyLines[entity]?[property] == nil { propertyLines[entity, default: [:]][property] = line }
    }

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes a: [String: String]) {
        guard failure == nil else { return }
        if ignoredDepth > 0 {
            ignoredDepth += 1
            return
        }
        let line = parser.lineNumber
        switch element {
        case "model":
            sawModel = true
        case "userInfo" where fetchedProperty != nil && current != nil:
            break  // the fetched property's, which its predicate reads as $FETCHED_PROPERTY.userInfo
        case "entry" where fetchedProperty != nil && current != nil:
            guard let key = a["key"] else { return fail(parser, "<entry> of a fetched property's user info needs a key") }
            fetchedUserInfo[key] = a["value"] ?? ""
        case "elements", "userInfo", "configuration":
            ignoredDepth = 1  // layout, user info, configurations: no effect on the store
        case "entity":
            guard let name = a["name"] else { return fail(parser, "<entity> without a name") }
            guard current == nil else { return fail(parser, "<entity name=\"\(name)\"> inside another entity") }
            current = EntityDescription(name: name, parent: a["parentEntity"], isAbstract: a["isAbstract"] == "YES", renamingIdentifier: a["elementID"])
            if entityLines[name] == nil { entityLines[name] = line }
        case "attribute":
            guard current != nil, let name = a["name"] else { return fail(parser, "<attribute> outside an entity or without a name") }
            remember(name, line)
            let typeName = a["attributeType"] ?? "Undefined"
            guard let type = CoreDataModelReader.types[typeName] else {
                return fail(
                    parser,
                    "attribute \"\(name)\" has type \"\(typeName)\", which Ambar does not support (supported: \(CoreDataModelReader.types.keys.sorted().joined(separator: ", ")))"
                )
            }
            let transient = a["transient"] == "YES"
            if type == .undefined && !transient {
                return fail(parser, "attribute \"\(name)\" has no type (Undefined); only a transient attribute may have none")
            }
            guard let defaultValue = CoreDataModelReader.defaultValue(a, type: type) else {
                let text = a["defaultValueString"] ?? a["defaultDateTimeInterval"] ?? ""
                return fail(parser, "attribute \"\(name)\": the default \"\(text)\" cannot be read as \(typeName) (Core Data could not read it either)")
            }
            var derivation: String?
            if a["derived"] == "YES" {
                guard let expression = a["derivationExpression"], !expression.isEmpty else {
                    return fail(parser, "attribute \"\(name)\" is derived but has no derivationExpression")
                }
                derivation = expression
            }
            let validation: AttributeValidation
            do {
                validation = try CoreDataModelReader.validation(a, type: type)
            } catch {
                return fail(parser, "attribute \"\(name)\": \(error.message)")
            }
            current?.attributes.append(
                AttributeDescription(
                    name: name, type: type, isOptional: a["optional"] == "YES", defaultValue: defaultValue, isIndexed: a["indexed"] == "YES" && !transient,
                    renamingIdentifier: a["elementID"], isTransient: transient,
                    valueTransformerName: type == .transformable ? a["valueTransformerName"].flatMap { $0.isEmpty ? nil : $0 } : nil,
                    customClassName: type == .transformable ? a["customClassName"].flatMap { $0.isEmpty ? nil : $0 } : nil, derivation: derivation,
                    validation: validation, preservesValueOnDeletion: a["preserveAfterDeletion"] == "YES"))
        case "relationship":
            guard current != nil, let name = a["name"], let destination = a["destinationEntity"] else {
                return fail(parser, "<relationship> outside an entity or without name and destinationEntity")
            }
            remember(name, line)
            // Newer files say toMany="YES"; older ones give only maxCount (1: to-one).
            let toMany = a["toMany"] == "YES"
            let ruleName = a["deletionRule"] ?? "Nullify"
            guard let rule = CoreDataModelReader.deleteRules[ruleName] else {
                return fail(
                    parser,
                    "relationship \"\(name)\" has unknown deletion rule \"\(ruleName)\" (known: \(CoreDataModelReader.deleteRules.keys.sorted().joined(separator: ", ")))"
                )
            }
            current?.relationships.append(
                RelationshipDescription(
                    name: name, destination: destination, inverse: a["inverseName"], isToMany: toMany, deleteRule: rule,
                    isOptional: a["optional"] == "YES", renamingIdentifier: a["elementID"],
                    isOrdered: toMany && a["ordered"] == "YES", isTransient: a["transient"] == "YES",
                    minCount: toMany ? CoreDataModelReader.count(a["minCount"]) : 0,
                    maxCount: toMany ? CoreDataModelReader.count(a["maxCount"]) : 0))
        case "uniquenessConstraints", "compoundIndexes":
            guard current != nil else { return fail(parser, "<\(element)> outside an entity") }
        case "uniquenessConstraint":
            constraint = []
        case "constraint":
            guard let value = a["value"] else { return fail(parser, "<constraint> without a value") }
            constraint?.append(value)
            remember(value, line)  // a constraint on a name the entity lacks points here
        case "fetchIndex", "compoundIndex":
            guard current != nil else { return fail(parser, "<\(element)> outside an entity") }
            index = (a["name"] ?? element, line, [])
        case "fetchIndexElement", "index":
            guard index != nil else { return fail(parser, "<\(element)> outside a <fetchIndex> or <compoundIndex>") }
            if let property = a["property"] ?? a["value"] {
                index?.properties.append(property)
            } else if let expression = a["expression"], ResolvedModel.isValidIdentifier(expression) {
                index?.properties.append(expression)
            } else {
                // An index on a computed expression: Ambar's SQL cannot use it. Indexes only speed
                // fetches up, so the model loads without it.
                CoreDataModelReader.logger.warning(
                    "\(path):\(line): index element on expression \"\(a["expression"] ?? "?")\" of \(current?.name ?? "?") is not created (only property indexes are)"
                )
            }
        case "fetchedProperty":
            guard current != nil, let name = a["name"] else { return fail(parser, "<fetchedProperty> outside an entity or without a name") }
            remember(name, line)
            fetchedProperty = (name, line)
        case "fetchRequest":
            guard let entity = a["entity"] else { return fail(parser, "<fetchRequest> without an entity") }
            if let (name, _) = fetchedProperty {
                current?.fetchedProperties.append(FetchedPropertyDescription(name: name, entityName: entity, predicateFormat: a["predicateString"] ?? ""))
                ignoredDepth = 1  // its sort descriptors and the like
            } else {
                guard let name = a["name"] else { return fail(parser, "<fetchRequest> without a name") }
                templates.append(
                    FetchRequestTemplate(
                        name: name, entityName: entity, predicateFormat: a["predicateString"] ?? "",
                        fetchLimit: Int(a["fetchLimit"] ?? "") ?? 0, includesSubentities: a["includesSubentities"] != "NO"))
                if templateLines[name] == nil { templateLines[name] = line }
                ignoredDepth = 1
            }
        default:
            fail(parser, "<\(element)> is a Core Data feature Ambar does not support")
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        guard failure == nil else { return }
        if ignoredDepth > 0 {
            ignoredDepth -= 1
            return
        }
        switch element {
        case "entity":
            if let current { entities.append(current) }
            current = nil
        case "uniquenessConstraint":
            if let constraint, !constraint.isEmpty { current?.uniquenessConstraints.append(constraint) }
            constraint = nil
        case "fetchIndex", "compoundIndex":
            guard let found = index, let entity = current?.name else { return }
            index = nil
            guard !found.properties.isEmpty else { return }
            // Index errors (a property the entity lacks) point at the index's opening line.
            for property in found.properties where propertyLines[entity]?[property] == nil {
                propertyLines[entity, default: [:]][property] = found.line
            }
            if found.properties.count == 1, let i = current?.attributes.firstIndex(where: { $0.name == found.properties[0] && !$0.isTransient }) {
                current?.attributes[i].isIndexed = true
            } else if current?.indexes.contains(found.properties) == false {
                current?.indexes.append(found.properties)
            }
        case "fetchedProperty":
            if let name = fetchedProperty?.name, let i = current?.fetchedProperties.lastIndex(where: { $0.name == name }) {
                current?.fetchedProperties[i].userInfo = fetchedUserInfo
            }
            fetchedProperty = nil
            fetchedUserInfo = [:]
        default:
            break
        }
    }
}
