import Foundation

/// How a derived attribute is computed: the derivation expressions Core Data documents for
/// `NSDerivedAttributeDescription`, evaluated when the object is saved to the store.
///
/// | expression | value |
/// |---|---|
/// | `name`, `author.name` | the attribute at that key path (through to-one relationships) |
/// | `canonical:(name)` | the text folded for search: lower case, without diacritics |
/// | `lowercase:(name)`, `uppercase:(name)` | the text in lower or upper case |
/// | `books.@count` | the number of objects in a to-many relationship |
/// | `books.@sum.pages` (`@avg`, `@min`, `@max`) | an aggregate of an attribute over a to-many relationship |
/// | `now()` | the time of the save |
///
/// A derived attribute is computed each time its object is saved to the store (inserted, or
/// changed — a change to one of its relationships counts); a change to *another* object that
/// the expression reads does not recompute it until its own object is saved again.
enum DerivedAttribute: Sendable {
    case keyPath([String])
    case text(TextFunction, [String])
    case count([String])
    case aggregate(AggregateFunction, relationship: [String], attribute: String)
    case now

    enum TextFunction: String, Sendable { case canonical, lowercase, uppercase }

    struct ParseError: Error { let message: String }

    /// Parses a derivation expression.
    init(parsing expression: String) throws(ParseError) {
        let text = expression.trimmingCharacters(in: .whitespaces)
        if text == "now()" {
            self = .now
            return
        }
        for function in [TextFunction.canonical, .lowercase, .uppercase] where text.hasPrefix("\(function.rawValue):(") && text.hasSuffix(")") {
            let inner = text.dropFirst(function.rawValue.count + 2).dropLast().trimmingCharacters(in: .whitespaces)
            self = .text(function, try Self.path(inner, expression))
            return
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let at = parts.firstIndex(where: { $0.hasPrefix("@") }) {
            let relationship = Array(parts[..<at])
            guard !relationship.isEmpty, relationship.allSatisfy(Self.isName) else {
                throw ParseError(
                    message:
                        "\"\(expression)\" is not a derivation Ambar supports (key paths, canonical:/lowercase:/uppercase:(key), rel.@count, rel.@sum|@avg|@min|@max.key, now())"
                )
            }
            let function = parts[at]
            if function == "@count", at == parts.count - 1 {
                self = .count(relationship)
                return
            }
            guard let aggregate = AggregateFunction(rawValue: String(function.dropFirst())), aggregate != .count,
                at == parts.count - 2, Self.isName(parts[at + 1])
            else {
                throw ParseError(
                    message:
                        "\"\(expression)\" is not a derivation Ambar supports (key paths, canonical:/lowercase:/uppercase:(key), rel.@count, rel.@sum|@avg|@min|@max.key, now())"
                )
            }
            self = .aggregate(aggregate, relationship: relationship, attribute: parts[at + 1])
            return
        }
        self = .keyPath(try Self.path(text, expression))
    }

    private static func path(_ text: String, _ expression: String) throws(ParseError) -> [String] {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty, parts.allSatisfy(isName) else {
            throw ParseError(
                message:
                    "\"\(expression)\" is not a derivation Ambar supports (key paths, canonical:/lowercase:/uppercase:(key), rel.@count, rel.@sum|@avg|@min|@max.key, now())"
            )
        }
        return parts
    }

    private static func isName(_ s: String) -> Bool { ResolvedModel.isValidIdentifier(s) }

    /// What does not fit `layout` (a missing property, a to-many where a to-one is needed…), or nil.
    func problem(in layout: EntityLayout, lookup: (String) -> EntityLayout?) -> String? {
        func follow(_ names: [String], toMany: Bool) -> EntityLayout?? {
            var current = layout
            for (n, name) in names.enumerated() {
                guard let i = current.relationshipIndex[name] else { return .some(nil) }
                let rel = current.relationships[i]
                let last = n == names.count - 1
                if rel.isToMany != (toMany && last) { return .some(nil) }
                guard let next = lookup(rel.description.destination) else { return .some(nil) }
                current = next
            }
            return .some(current)
        }
        func attribute(_ path: [String]) -> String? {
            guard let holder = follow(Array(path.dropLast()), toMany: false), let holder, let last = path.last,
                holder.attributeIndex[last] != nil
            else {
                return "'\(path.joined(separator: "."))' is not an attribute reached through to-one relationships"
            }
            return nil
        }
        switch self {
        case .now: return nil
        case .keyPath(let path), .text(_, let path): return attribute(path)
        case .count(let relationship):
            guard let holder = follow(relationship, toMany: true), holder != nil else {
                return "'\(relationship.joined(separator: "."))' is not a to-many relationship"
            }
            return nil
        case .aggregate(_, let relationship, let name):
            guard let holder = follow(relationship, toMany: true), let holder else {
                return "'\(relationship.joined(separator: "."))' is not a to-many relationship"
            }
            guard holder.attributeIndex[name] != nil else { return "'\(holder.name)' has no attribute '\(name)'" }
            return nil
        }
    }

    /// The value for `object`, read on its context's queue.
    ///
    /// - Throws: the error of reading a property on the way (the model was checked when it was
    ///   made, so this means the object or its context is not usable).
    func evaluate(on object: ManagedObject, now: Date) throws(AmbarError) -> AttributeValue {
        switch self {
        case .now:
            return .date(now)
        case .keyPath(let path):
            return try Self.value(path, on: object)
        case .text(let function, let path):
            guard case .string(let s) = try Self.value(path, on: object) else { return .null }
            switch function {
            case .canonical: return .string(TextSemantics.fold(s, [.caseInsensitive, .diacriticInsensitive]))
            case .lowercase: return .string(s.lowercased())
            case .uppercase: return .string(s.uppercased())
            }
        case .count(let relationship):
            return .integer(Int64(try Self.destinations(relationship, of: object).count))
        case .aggregate(let function, let relationship, let name):
            var values: [AttributeValue] = []
            for destination in try Self.destinations(relationship, of: object) { values.append(try destination.value(forKey: name)) }
            return function.apply(to: values)
        }
    }

    /// The object at the end of the to-one relationships of `path` (all but its last name), or
    /// nil when one of them is empty.
    private static func holder(_ path: [String], from object: ManagedObject) throws(AmbarError) -> ManagedObject? {
        var holder: ManagedObject? = object
        for name in path.dropLast() {
            guard let current = holder else { return nil }
            holder = try current.object(forKey: name)
        }
        return holder
    }

    private static func value(_ path: [String], on object: ManagedObject) throws(AmbarError) -> AttributeValue {
        guard let holder = try holder(path, from: object), let last = path.last else { return .null }
        return try holder.value(forKey: last)
    }

    private static func destinations(_ path: [String], of object: ManagedObject) throws(AmbarError) -> Set<ManagedObject> {
        guard let holder = try holder(path, from: object), let last = path.last else { return [] }
        return try holder.objects(forKey: last).filter { !$0.isDeleted }
    }
}
