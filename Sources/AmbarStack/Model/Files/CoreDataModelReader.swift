import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads Core Data's model XML (the `contents` file of an `.xcdatamodel`): entities with their
/// parent and abstractness, attributes with type, optionality, default and index, relationships
/// with destination, inverse, to-many and delete rule, uniqueness constraints, and renaming
/// identifiers (Xcode's "Renaming ID", kept as `elementID`).
///
/// What Ambar cannot honour is an error naming the element and line — transient, derived or
/// transformable attributes, ordered relationships, compound fetch indexes, fetched properties,
/// fetch requests — never a silent skip. Layout (`elements`) and `userInfo` are ignored.
enum CoreDataModelReader {
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
        return try ManagedObjectModel(entities: builder.entities)
    }

    /// Core Data's attribute type names.
    static let types: [String: AttributeType] = [
        "String": .string, "Integer 16": .integer16, "Integer 32": .integer32, "Integer 64": .integer64,
        "Double": .double, "Float": .float, "Boolean": .boolean, "Date": .date, "Binary": .binary,
        "UUID": .uuid, "URI": .uri, "Decimal": .decimal,
    ]

    static let deleteRules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]
}

/// Builds entities while the parser walks the XML.
private final class ModelXMLBuilder: NSObject, XMLParserDelegate {
    let path: String
    var entities: [EntityDescription] = []
    var failure: AmbarError?
    var sawModel = false
    private var current: EntityDescription?
    private var constraint: [String]?
    private var fetchIndex: (name: String, properties: [String])?
    private var ignoredDepth = 0

    init(path: String) { self.path = path }

    private func fail(_ parser: XMLParser, _ message: String) {
        guard failure == nil else { return }
        failure = .invalidModel("\(path):\(parser.lineNumber): \(message)")
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes a: [String: String]) {
        guard failure == nil else { return }
        if ignoredDepth > 0 { ignoredDepth += 1; return }
        switch element {
        case "model":
            sawModel = true
        case "elements", "userInfo", "configuration":
            ignoredDepth = 1  // layout, user info, configurations: no effect on the store
        case "entity":
            guard let name = a["name"] else { return fail(parser, "<entity> without a name") }
            current = EntityDescription(name: name, parent: a["parentEntity"], isAbstract: a["isAbstract"] == "YES", renamingIdentifier: a["elementID"])
        case "attribute":
            guard current != nil, let name = a["name"] else { return fail(parser, "<attribute> outside an entity or without a name") }
            if a["transient"] == "YES" { return fail(parser, "attribute \"\(name)\" is transient; Ambar stores every attribute (remove it or make it stored)") }
            if a["derived"] == "YES" { return fail(parser, "attribute \"\(name)\" is derived; derived attributes are not supported") }
            let typeName = a["attributeType"] ?? "Undefined"
            guard let type = CoreDataModelReader.types[typeName] else {
                return fail(parser, "attribute \"\(name)\" has type \"\(typeName)\", which Ambar does not support (supported: \(CoreDataModelReader.types.keys.sorted().joined(separator: ", ")))")
            }
            guard let defaultValue = Self.defaultValue(a, type: type) else {
                return fail(parser, "attribute \"\(name)\": the default \"\(a["defaultValueString"] ?? a["defaultDateTimeInterval"] ?? "")\" is not a \(typeName)")
            }
            current?.attributes.append(AttributeDescription(
                name: name, type: type, isOptional: a["optional"] == "YES", defaultValue: defaultValue, isIndexed: a["indexed"] == "YES",
                renamingIdentifier: a["elementID"]))
        case "relationship":
            guard current != nil, let name = a["name"], let destination = a["destinationEntity"] else {
                return fail(parser, "<relationship> outside an entity or without name and destinationEntity")
            }
            if a["ordered"] == "YES" { return fail(parser, "relationship \"\(name)\" is ordered; ordered relationships are not supported (sort by an attribute instead)") }
            if a["transient"] == "YES" { return fail(parser, "relationship \"\(name)\" is transient; not supported") }
            let toMany = a["toMany"] == "YES"
            if toMany && (a["minCount"] != nil || a["maxCount"] != nil) {
                return fail(parser, "relationship \"\(name)\" has count limits; they are not supported")
            }
            let ruleName = a["deletionRule"] ?? "Nullify"
            guard let rule = CoreDataModelReader.deleteRules[ruleName] else { return fail(parser, "relationship \"\(name)\" has unknown deletion rule \"\(ruleName)\"") }
            current?.relationships.append(RelationshipDescription(
                name: name, destination: destination, inverse: a["inverseName"], isToMany: toMany, deleteRule: rule,
                isOptional: a["optional"] == "YES", renamingIdentifier: a["elementID"]))
        case "uniquenessConstraints":
            break
        case "uniquenessConstraint":
            constraint = []
        case "constraint":
            guard let value = a["value"] else { return fail(parser, "<constraint> without a value") }
            constraint?.append(value)
        case "fetchIndex":
            fetchIndex = (a["name"] ?? "index", [])
        case "fetchIndexElement":
            guard let property = a["property"] else { return fail(parser, "<fetchIndexElement> without a property") }
            fetchIndex?.properties.append(property)
        default:
            fail(parser, "<\(element)> is a Core Data feature Ambar does not support")
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        guard failure == nil else { return }
        if ignoredDepth > 0 { ignoredDepth -= 1; return }
        switch element {
        case "entity":
            if let current { entities.append(current) }
            current = nil
        case "uniquenessConstraint":
            if let constraint, !constraint.isEmpty { current?.uniquenessConstraints.append(constraint) }
            constraint = nil
        case "fetchIndex":
            guard let index = fetchIndex else { return }
            fetchIndex = nil
            guard index.properties.count == 1, let property = index.properties.first,
                  let i = current?.attributes.firstIndex(where: { $0.name == property }) else {
                return fail(parser, "fetch index \"\(index.name)\" covers \(index.properties); only single-attribute indexes are supported")
            }
            current?.attributes[i].isIndexed = true
        default:
            break
        }
    }

    /// The attribute's default, or `nil` when the text does not fit the type.
    static func defaultValue(_ a: [String: String], type: AttributeType) -> AttributeValue? {
        if type == .date {
            guard let interval = a["defaultDateTimeInterval"] else { return .null }
            return Double(interval).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        }
        guard let text = a["defaultValueString"] else { return .null }
        switch type {
        case .string: return .string(text)
        case .integer16, .integer32, .integer64: return Int64(text).map { .integer($0) }
        case .double, .float: return Double(text).map { .double($0) }
        case .boolean: return ["YES": true, "NO": false, "true": true, "false": false][text].map { .bool($0) }
        case .decimal: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case .uuid: return UUID(uuidString: text).map { .uuid($0) }
        case .uri: return URL(string: text).map { .url($0) }
        case .binary, .date: return nil
        }
    }
}
