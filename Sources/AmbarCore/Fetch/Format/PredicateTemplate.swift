import Foundation

/// A predicate parsed from an `NSPredicate` format string whose `$VARIABLES` are given later:
/// what a Core Data fetch request template or fetched property holds.
///
/// ```swift
/// let template = try PredicateTemplate(format: "author.name == $NAME AND pages >= $MIN")
/// let predicate = try template.predicate(substituting: ["NAME": "Le Guin", "MIN": 200])
/// ```
///
/// Formats without variables are simpler to write with ``ObjectPredicate/init(format:_:)``.
public struct PredicateTemplate {
    /// The format string as given.
    public let format: String
    /// The names of the variables the format uses (without `$`).
    public let variables: Set<String>
    private let parsed: FormatPredicate

    /// Parses `format`, taking `arguments` for its `%@`, `%K`, `%d`… specifiers in order.
    ///
    /// - Throws: ``AmbarError/invalidPredicateFormat(format:position:reason:)`` pointing at the
    ///   position where the format stops making sense.
    public init(format: String, _ arguments: Any?...) throws(AmbarError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses `format`, taking the elements of `argumentArray` for its specifiers in order.
    public init(format: String, argumentArray: [Any?]) throws(AmbarError) {
        var parser = try PredicateFormatParser(format: format, arguments: argumentArray)
        self.parsed = try parser.parse()
        self.format = format
        self.variables = parsed.variables
    }

    /// The predicate with each `$NAME` replaced by `variables["NAME"]` (values as for `%@`:
    /// strings, numbers, dates, arrays, managed objects, object IDs…; `NSNull`-like `nil` is nil).
    ///
    /// - Throws: ``AmbarError/invalidPredicateFormat(format:position:reason:)`` when a variable
    ///   has no value or a comparison cannot be expressed.
    public func predicate(substituting variables: [String: Any?] = [:]) throws(AmbarError) -> ObjectPredicate {
        try FormatLowering(format: format, variables: variables).lower(parsed)
    }
}

extension ObjectPredicate {
    /// Parses an `NSPredicate` format string, taking `arguments` for its `%@`, `%K`, `%d`, `%i`,
    /// `%ld`, `%lld`, `%f` specifiers in order.
    ///
    /// ```swift
    /// let p = try ObjectPredicate(format: "name BEGINSWITH[cd] %@ AND salary > %d", "al", 50_000)
    /// let q = try ObjectPredicate(format: "ANY employees.salary > 100000 OR department == %@", sales)
    /// let r = try ObjectPredicate(format: "employees.@count >= 3 AND NOT (name IN {'Archive', 'Test'})")
    /// ```
    ///
    /// The grammar is Core Data's: comparisons in every spelling (`=`, `==`, `!=`, `<>`, `<`,
    /// `<=`, `=<`, `>`, `>=`, `=>`), `BETWEEN`, `IN`, `BEGINSWITH`, `CONTAINS`, `ENDSWITH`, `LIKE`,
    /// `MATCHES` with `[c]`, `[d]`, `[cd]`; `AND`/`OR`/`NOT` and `&&`/`||`/`!`;
    /// `ANY`/`SOME`/`ALL`/`NONE`; `@count`, `@sum`, `@avg`, `@min`, `@max`; key paths through
    /// relationships; `nil`/`NULL`, `YES`/`NO`/`TRUE`/`FALSE`, `TRUEPREDICATE`/`FALSEPREDICATE`;
    /// `SELF`; `CAST(…, "NSDate")`; two key paths compared (`items.@count == quantity`);
    /// `SUBQUERY(items, $i, $i.price > budget).@count > 0`. A parsed predicate is the same
    /// ``ObjectPredicate`` the typed keys build, so it evaluates identically in SQL and in memory.
    ///
    /// - Throws: ``AmbarError/invalidPredicateFormat(format:position:reason:)`` quoting the format
    ///   and pointing at the position, for a syntax error, a construct Ambar does not support
    ///   (`FUNCTION`, arithmetic), a `$VARIABLE` (use ``PredicateTemplate``) or a wrong number
    ///   of arguments.
    public init(format: String, _ arguments: Any?...) throws(AmbarError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses an `NSPredicate` format string, taking the elements of `argumentArray` for its
    /// specifiers in order (see ``init(format:_:)``).
    public init(format: String, argumentArray: [Any?]) throws(AmbarError) {
        self = try PredicateTemplate(format: format, argumentArray: argumentArray).predicate()
    }
}

extension FetchRequest {
    /// A request for the entity of `T` whose predicate is an `NSPredicate` format string.
    ///
    /// - Throws: ``AmbarError/invalidPredicateFormat(format:position:reason:)``.
    public init(format: String, _ arguments: Any?..., sortDescriptors: [ObjectSortDescriptor] = []) throws(AmbarError) {
        self.init(predicate: try ObjectPredicate(format: format, argumentArray: arguments), sortDescriptors: sortDescriptors)
    }

    /// A request for the entity named `entityName` whose predicate is an `NSPredicate` format string.
    ///
    /// - Throws: ``AmbarError/invalidPredicateFormat(format:position:reason:)``.
    public init(entityName: String, format: String, _ arguments: Any?..., sortDescriptors: [ObjectSortDescriptor] = []) throws(AmbarError) {
        self.init(entityName: entityName, predicate: try ObjectPredicate(format: format, argumentArray: arguments), sortDescriptors: sortDescriptors)
    }
}

extension ManagedObjectModel {
    /// The fetch request stored in the model under `name` (Core Data's
    /// `fetchRequestFromTemplate(withName:substitutionVariables:)`), its `$VARIABLES` replaced by
    /// `substitutionVariables`.
    ///
    /// ```swift
    /// let request = try model.fetchRequestTemplate(named: "BooksByAuthor", substitutionVariables: ["NAME": "Le Guin"])
    /// let books = try context.fetch(request)
    /// ```
    ///
    /// - Throws: ``AmbarError/invalidFetchRequest(_:)`` when the model has no such template, or
    ///   ``AmbarError/invalidPredicateFormat(format:position:reason:)`` when its predicate does
    ///   not parse or a variable has no value.
    public func fetchRequestTemplate(named name: String, substitutionVariables: [String: Any?] = [:]) throws(AmbarError) -> FetchRequest<ManagedObject> {
        guard let template = fetchRequestTemplates[name] else {
            throw .invalidFetchRequest(
                "the model has no fetch request template named '\(name)' (it has: \(fetchRequestTemplates.keys.sorted().joined(separator: ", ")))")
        }
        var request = FetchRequest<ManagedObject>(entityName: template.entityName)
        if !template.predicateFormat.isEmpty {
            request.predicate = try PredicateTemplate(format: template.predicateFormat).predicate(substituting: substitutionVariables)
        }
        request.fetchLimit = template.fetchLimit
        request.sortDescriptors = template.sortDescriptors
        request.includesSubentities = template.includesSubentities
        return request
    }
}

extension ManagedObjectContext {
    /// The objects of the fetched property `name` of `object` (Core Data's `<fetchedProperty>`),
    /// fetched now with `$FETCH_SOURCE` standing for `object` and `$FETCHED_PROPERTY.userInfo.KEY`
    /// for the property's user info, in the order of its sort descriptors. Call it on the
    /// context's queue.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)`` when the entity has no such
    ///   fetched property, the errors of ``fetch(_:)``, or
    ///   ``AmbarError/invalidPredicateFormat(format:position:reason:)`` when its predicate does
    ///   not parse.
    public func fetchedProperty(_ name: String, of object: ManagedObject) throws(AmbarError) -> [ManagedObject] {
        try checkQueue("fetchedProperty")
        guard let property = object.layout.fetchedProperties.first(where: { $0.name == name }) else {
            throw .unknownProperty(entity: object.entityName, property: name)
        }
        var request = FetchRequest<ManagedObject>(entityName: property.entityName)
        if !property.predicateFormat.isEmpty {
            let description: [String: Any?] = ["name": property.name, "userInfo": property.userInfo]
            request.predicate = try PredicateTemplate(format: property.predicateFormat)
                .predicate(substituting: ["FETCH_SOURCE": object.objectID, "FETCHED_PROPERTY": description])
        }
        request.sortDescriptors = property.sortDescriptors
        return try fetch(request)
    }
}
