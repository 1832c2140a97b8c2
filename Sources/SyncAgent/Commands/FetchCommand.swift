import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation
import RecordImport

/// `sync-agent fetch --entity E [--predicate FORMAT] [--sort KEY[:desc]]… [--limit N] [--json]`:
/// the objects of a store, for people and scripts looking inside it.
struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Print the objects of an entity that match an NSPredicate format string.",
        discussion: """
            The predicate is an NSPredicate format string without arguments, e.g. \
            "name BEGINSWITH[c] 'a' AND salary > 50000", "ANY employees.age < 30" or \
            "SUBQUERY(employees, $e, $e.salary > budget).@count >= 2". Objects of \
            sub-entities are included. With --json each object is one JSON line holding "id" (its \
            URI), every stored attribute by name (binary and transformable values as base64, \
            dates as ISO 8601, UUIDs, URIs and decimals as strings, nil as null) and every stored \
            relationship by name: a to-one as the related object's URI or null, a to-many as an \
            array of URIs (in order for an ordered relationship, sorted otherwise). With --relations \
            REL=KEY a relationship is printed as its related objects' values of their attribute KEY \
            instead (what `import --relate REL=KEY` reads back). A bad format string \
            exits with status 65 and says where it stops making sense; an unknown entity exits with 64.
            """)

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "The entity to fetch.")
    var entity: String

    @Option(name: .long, help: "An NSPredicate format string (no % arguments or $ variables).")
    var predicate: String?

    @Option(name: .long, help: "Sort by this key path; add :desc for descending (repeatable; ties by primary key).")
    var sort: [String] = []

    @Option(name: .long, help: "At most this many objects.")
    var limit: Int?

    @Flag(name: .long, help: "One JSON object per line.")
    var json = false

    @Option(
        name: .long, help: "REL=KEY: with --json, print relationship REL as its related objects' KEY values instead of URIs (repeatable, or comma-separated).")
    var relations: [String] = []

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let model = try stack.mainCoordinator.model
        guard model.entity(named: entity) != nil else {
            FileHandle.standardError.write(
                Data("error: the store has no entity named '\(entity)' (it has: \(model.entityNames.sorted().joined(separator: ", ")))\n".utf8))
            throw ExitCode(64)
        }
        let relatedKeys: [String: String]
        do {
            relatedKeys = try Self.relatedKeys(relations, entity: entity, model: model)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(64)
        }
        var request = FetchRequest<ManagedObject>(entityName: entity)
        do {
            if let predicate { request.predicate = try ObjectPredicate(format: predicate) }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(65)
        }
        request.sortDescriptors = Self.sortDescriptors(sort)
        request.fetchLimit = limit ?? 0
        let context = try stack.temporaryContext()
        let asJSON = json
        let outcome: Result<[String], AmbarError> = context.performAndWait {
            do throws(AmbarError) {
                let objects = try context.fetch(request)
                return .success(
                    try objects.map { object throws(AmbarError) in asJSON ? try ObjectJSON.line(object, relatedKeys: relatedKeys) : try Self.textLine(object) })
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let lines):
            for line in lines { print(line) }
        case .failure(let error):
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(Self.isAboutTheRequest(error) ? 65 : 1)
        }
    }

    /// `--relations` as a map from relationship to the destination's key attribute, checked
    /// against the model.
    static func relatedKeys(_ arguments: [String], entity: String, model: ManagedObjectModel) throws(ImportSetupError) -> [String: String] {
        let map = try ImportRecordDecoder.relateOptions(arguments)
        // The same checks as import's --relate: the relationship and the key exist.
        _ = try ImportRecordDecoder.relationshipTargets(of: entity, in: model, relate: map)
        return map
    }

    /// `KEY`, `KEY:asc` or `KEY:desc` (also `:ascending`, `:descending`) terms as sort descriptors.
    static func sortDescriptors(_ terms: [String]) -> [ObjectSortDescriptor] {
        terms.map { term in
            for suffix in [":desc", ":descending"] where term.lowercased().hasSuffix(suffix) {
                return ObjectSortDescriptor(key: String(term.dropLast(suffix.count)), ascending: false)
            }
            for suffix in [":asc", ":ascending"] where term.lowercased().hasSuffix(suffix) {
                return ObjectSortDescriptor(key: String(term.dropLast(suffix.count)), ascending: true)
            }
            return ObjectSortDescriptor(key: term, ascending: true)
        }
    }

    /// Errors that say the predicate or sort does not fit the model (exit 65), as opposed to the
    /// store failing.
    static func isAboutTheRequest(_ error: AmbarError) -> Bool {
        switch error {
        case .invalidPredicate, .invalidPredicateFormat, .unknownProperty, .invalidFetchRequest, .unknownEntity: return true
        default: return false
        }
    }

    static func textLine(_ object: ManagedObject) throws(AmbarError) -> String {
        let fields = try ObjectJSON.attributes(object).map { name, value -> String in
            switch value {
            case .string(let s): return "\(name)=\(s.debugDescription)"
            default: return "\(name)=\(ObjectJSON.jsonValue(value) is NSNull ? "nil" : "\(ObjectJSON.jsonValue(value))")"
            }
        }
        return ([object.objectID.uriString] + fields).joined(separator: "  ")
    }
}
