import Foundation

/// Evaluates predicates and sort orders on managed objects in memory, with the same semantics as
/// the SQL a store generates (see ``ObjectPredicate``). Must run on the objects' context queue.
package enum PredicateEvaluation {
    /// Whether `object` matches `predicate`; `outer` holds the objects enclosing `ANY`s and
    /// `SUBQUERY`s range from, innermost last (what ``ObjectExpression/outer(_:levels:)`` and
    /// ``ObjectPredicate/enclosing(_:)`` read).
    package static func evaluate(_ predicate: ObjectPredicate, on object: ManagedObject, outer: [ManagedObject] = []) throws(AmbarError) -> Bool {
        let context = object.managedObjectContext
        if let rewritten = try PredicateResolution.rewrite(predicate, layout: object.layout, lookup: { context?.layoutIfKnown($0) }) {
            return try evaluate(rewritten, on: object, outer: outer)
        }
        switch predicate {
        case .quantified:
            throw .invalidPredicate("\(predicate) cannot be resolved against '\(object.layout.name)'")
        case .constant(let b):
            return b
        case .and(let parts):
            for p in parts where !(try evaluate(p, on: object, outer: outer)) { return false }
            return true
        case .or(let parts):
            for p in parts where try evaluate(p, on: object, outer: outer) { return true }
            return false
        case .not(let p):
            return !(try evaluate(p, on: object, outer: outer))
        case .keyComparison(let lhs, let op, let rhs, let options):
            let a = try operand(lhs, on: object, outer: outer)
            let b = try operand(rhs, on: object, outer: outer)
            let type = try KeyComparisonTypes.common(a.type, b.type, predicate)
            let x = a.value.isNull ? a.value : (a.value.coerced(to: type) ?? a.value)
            let y = b.value.isNull ? b.value : (b.value.coerced(to: type) ?? b.value)
            return compare(x, op, y, type, options)
        case .objectIn(let ids):
            return ids.contains(object.objectID)
        case .comparison(let key, let op, let value, let options):
            let (attribute, current) = try resolveAttribute(key, on: object)
            let param = try coerce(value, to: attribute, key: key)
            return compare(current, op, param, attribute.type, options)
        case .isIn(let key, let values, let options):
            let (attribute, current) = try resolveAttribute(key, on: object)
            if current.isNull { return false }
            for v in values {
                let param = try coerce(v, to: attribute, key: key)
                if !param.isNull, compare(current, .equal, param, attribute.type, options) { return true }
            }
            return false
        case .between(let key, let lower, let upper):
            let (attribute, current) = try resolveAttribute(key, on: object)
            let lo = try coerce(lower, to: attribute, key: key)
            let hi = try coerce(upper, to: attribute, key: key)
            return compare(current, .greaterOrEqual, lo, attribute.type, [])
                && compare(current, .lessOrEqual, hi, attribute.type, [])
        case .text(let key, let op, let pattern, let options):
            let (attribute, current) = try resolveAttribute(key, on: object)
            guard [.string, .uuid, .uri].contains(attribute.type) else {
                throw .invalidPredicate("'\(key)' is not text; \(op.rawValue) needs a string attribute")
            }
            guard case .text(let text) = StoredScalar(current) else { return false }
            return try TextSemantics.matches(op, text, pattern, options)
        case .relationship(let key, let target):
            let (holder, rel) = try resolveRelationship(key, on: object, toMany: false)
            guard let holder else { return target == nil }
            try holder.fireFaultOrThrow()
            return holder.toOne[rel.index] == target
        case .any(let key, let sub):
            let (holder, rel) = try resolveRelationship(key, on: object, toMany: true)
            guard let holder else { return false }
            for destination in try holder.readDestinations(at: rel.index) where try evaluate(sub, on: destination, outer: outer + [object]) {
                return true
            }
            return false
        case .subquery(let key, let sub, let op, let count):
            let (holder, rel) = try resolveRelationship(key, on: object, toMany: true)
            var matching = 0
            for destination in try holder?.readDestinations(at: rel.index) ?? [] where try evaluate(sub, on: destination, outer: outer + [object]) {
                matching += 1
            }
            return compare(.integer(Int64(matching)), op, .integer(Int64(count)), .integer64, [])
        case .enclosing(let sub):
            guard let enclosing = outer.last else {
                throw .invalidPredicate("\(sub) is read on the object an enclosing ANY or SUBQUERY ranges from, but there is none")
            }
            return try evaluate(sub, on: enclosing, outer: Array(outer.dropLast()))
        case .count(let key, let op, let count):
            let (holder, rel) = try resolveRelationship(key, on: object, toMany: true)
            let n = try holder.map { h throws(AmbarError) in try h.readDestinationIDs(at: rel.index).count } ?? 0
            return compare(.integer(Int64(n)), op, .integer(Int64(count)), .integer64, [])
        case .aggregate(let key, let function, let attributeName, let op, let value):
            let (holder, rel) = try resolveRelationship(key, on: object, toMany: true)
            guard let destinationLayout = context?.layoutIfKnown(rel.description.destination) else {
                throw .unknownEntity(rel.description.destination)
            }
            let (attribute, param) = try aggregateOperand(function, attributeName, value, destinationLayout, key: key)
            var values: [AttributeValue] = []
            for destination in try holder?.readDestinations(at: rel.index) ?? [] {
                values.append(try destination.value(forKey: attributeName))
            }
            let result = function.apply(to: values)
            let type: AttributeType = (function == .min || function == .max) ? attribute.type : .double
            return compare(result, op, param, type, [])
        }
    }

    /// The value of one side of a key-path comparison, and the type it has.
    private static func operand(_ expression: ObjectExpression, on object: ManagedObject, outer: [ManagedObject]) throws(AmbarError) -> (
        value: AttributeValue, type: AttributeType
    ) {
        switch expression {
        case .key(let path):
            let (attribute, value) = try resolveAttribute(path, on: object)
            return (value, attribute.type)
        case .outer(let path, let levels):
            guard levels >= 1, levels <= outer.count else {
                throw .invalidPredicate("'\(path)' reads the object \(levels) enclosing ANY or SUBQUERY range(s) out, but there are fewer enclosing ranges")
            }
            let (attribute, value) = try resolveAttribute(path, on: outer[outer.count - levels])
            return (value, attribute.type)
        case .count(let path):
            let (holder, rel) = try resolveRelationship(path, on: object, toMany: true)
            let n = try holder.map { h throws(AmbarError) in try h.readDestinationIDs(at: rel.index).count } ?? 0
            return (.integer(Int64(n)), .integer64)
        case .aggregate(let path, let function, let attributeName):
            let (holder, rel) = try resolveRelationship(path, on: object, toMany: true)
            guard let destinationLayout = object.managedObjectContext?.layoutIfKnown(rel.description.destination) else {
                throw .unknownEntity(rel.description.destination)
            }
            let (attribute, _) = try aggregateOperand(function, attributeName, .null, destinationLayout, key: path)
            var values: [AttributeValue] = []
            for destination in try holder?.readDestinations(at: rel.index) ?? [] {
                values.append(try destination.value(forKey: attributeName))
            }
            return (function.apply(to: values), aggregateType(function, attribute.type))
        }
    }

    /// The type of an aggregate's result: the attribute's for `@min` and `@max`, an integer for
    /// `@count` and for `@sum` of integers, a double otherwise.
    package static func aggregateType(_ function: AggregateFunction, _ attributeType: AttributeType) -> AttributeType {
        switch function {
        case .min, .max: return attributeType
        case .count: return .integer64
        case .sum: return attributeType.isInteger || attributeType == .boolean ? .integer64 : .double
        case .avg: return .double
        }
    }

    /// The aggregated attribute and the comparison value made to fit it: a number for `@sum` and
    /// `@avg`, a value of the attribute's type for `@min` and `@max`.
    package static func aggregateOperand(_ function: AggregateFunction, _ name: String, _ value: AttributeValue, _ destination: EntityLayout, key: String)
        throws(AmbarError) -> (AttributeDescription, AttributeValue)
    {
        guard let i = destination.attributeIndex[name] else { throw .unknownProperty(entity: destination.name, property: name) }
        let attribute = destination.attributes[i]
        let path = "\(key).@\(function.rawValue).\(name)"
        guard ![.decimal, .binary, .transformable, .undefined].contains(attribute.type) || function == .count else {
            throw .invalidPredicate("'\(path)': @\(function.rawValue) is not supported on \(attribute.type.rawValue) attributes")
        }
        switch function {
        case .sum, .avg, .count:
            guard attribute.type.isInteger || [.double, .float, .boolean].contains(attribute.type) || function == .count else {
                throw .invalidPredicate("'\(path)': @\(function.rawValue) needs a numeric attribute; '\(name)' is \(attribute.type.rawValue)")
            }
            switch value {
            case .null, .integer, .double: return (attribute, value)
            case .bool(let b): return (attribute, .integer(b ? 1 : 0))
            default: throw .invalidPredicate("'\(path)' is a number; cannot compare it with \(value.kindName) \(value)")
            }
        case .min, .max:
            return (attribute, try coerce(value, to: attribute, key: path))
        }
    }

    /// Follows the to-one relationships of `path` up to its last component.
    private static func walk(_ path: String, from object: ManagedObject) throws(AmbarError) -> (ManagedObject?, String) {
        // Most key paths name a property of the object itself: no splitting, no allocation.
        if !path.utf8.contains(UInt8(ascii: ".")) {
            guard !path.isEmpty else { throw .invalidPredicate("empty key path") }
            return (object, path)
        }
        let parts = path.split(separator: ".").map(String.init)
        guard let last = parts.last else { throw .invalidPredicate("empty key path") }
        var current: ManagedObject? = object
        var layout = object.layout
        for name in parts.dropLast() {
            guard let i = layout.relationshipIndex[name], !layout.relationships[i].isToMany else {
                throw .invalidPredicate("'\(name)' in key path '\(path)' is not a to-one relationship of '\(layout.name)'")
            }
            let destinationName = layout.relationships[i].description.destination
            current = try current?.readDestination(at: i)
            guard let next = current?.layout ?? object.managedObjectContext?.layoutIfKnown(destinationName) else {
                return (nil, last)
            }
            layout = next
        }
        return (current, last)
    }

    package static func resolveAttribute(_ path: String, on object: ManagedObject) throws(AmbarError) -> (AttributeDescription, AttributeValue) {
        let (holder, name) = try walk(path, from: object)
        guard let holder else {
            // A nil relationship on the way: find the attribute's type from the model.
            guard let attribute = try attributeDescription(path, from: object.layout, context: object.managedObjectContext) else {
                throw .invalidPredicate("key path '\(path)' does not end at an attribute")
            }
            return (attribute, .null)
        }
        guard let i = holder.layout.attributeSlot(name) else {
            if holder.layout.relationshipIndex[name] != nil {
                throw .invalidPredicate("'\(path)' is a relationship; compare attributes, or use ToOneKey / ToManyKey")
            }
            throw .unknownProperty(entity: holder.layout.name, property: name)
        }
        return (holder.layout.attributes[i], try holder.readAttribute(at: i))
    }

    private static func attributeDescription(_ path: String, from layout: EntityLayout, context: ManagedObjectContext?) throws(AmbarError)
        -> AttributeDescription?
    {
        var layout = layout
        let parts = path.split(separator: ".").map(String.init)
        for name in parts.dropLast() {
            guard let i = layout.relationshipIndex[name], let context,
                let next = context.layoutIfKnown(layout.relationships[i].description.destination)
            else { return nil }
            layout = next
        }
        guard let last = parts.last, let i = layout.attributeIndex[last] else { return nil }
        return layout.attributes[i]
    }

    private static func resolveRelationship(_ path: String, on object: ManagedObject, toMany: Bool) throws(AmbarError) -> (ManagedObject?, ResolvedRelationship)
    {
        let (holder, name) = try walk(path, from: object)
        let layout = try holderLayout(path, object)
        guard let i = layout.relationshipIndex[name], layout.relationships[i].isToMany == toMany else {
            throw .invalidPredicate("'\(path)' is not a to-\(toMany ? "many" : "one") relationship of '\(layout.name)'")
        }
        return (holder, layout.relationships[i])
    }

    private static func holderLayout(_ path: String, _ object: ManagedObject) throws(AmbarError) -> EntityLayout {
        var layout = object.layout
        for name in path.split(separator: ".").map(String.init).dropLast() {
            guard let i = layout.relationshipIndex[name],
                let next = object.managedObjectContext?.layoutIfKnown(layout.relationships[i].description.destination)
            else {
                throw .invalidPredicate("'\(name)' in key path '\(path)' is not a to-one relationship of '\(layout.name)'")
            }
            layout = next
        }
        return layout
    }

    package static func coerce(_ value: AttributeValue, to attribute: AttributeDescription, key: String) throws(AmbarError) -> AttributeValue {
        // A format string can only spell UUIDs and URIs as text.
        if case .string(let text) = value {
            if attribute.type == .uuid, let uuid = UUID(uuidString: text) { return .uuid(uuid) }
            if attribute.type == .uri, let url = URL(string: text) { return .url(url) }
        }
        if let coerced = value.coerced(to: attribute.type) { return coerced }
        // A number that does not fit an integer attribute (2.5, or 100000 for an Integer 16)
        // still compares as a number, as SQL compares it.
        if attribute.type.isInteger || attribute.type == .double || attribute.type == .float {
            switch value {
            case .integer, .double: return value
            default: break
            }
        }
        guard let coerced = value.coerced(to: attribute.type) else {
            throw .invalidPredicate("'\(key)' is \(attribute.type.rawValue); cannot compare it with \(value.kindName) \(value)")
        }
        return coerced
    }

    /// Compares with the documented semantics: null-safe equality, false for ordering with nil.
    package static func compare(_ a: AttributeValue, _ op: ComparisonOperator, _ b: AttributeValue, _ type: AttributeType, _ options: TextOptions) -> Bool {
        switch op {
        case .equal: return nullSafeEqual(a, b, type, options)
        case .notEqual: return !nullSafeEqual(a, b, type, options)
        default:
            guard !a.isNull, !b.isNull else { return false }
            let c = order(a, b, type, options)
            switch op {
            case .less: return c < 0
            case .lessOrEqual: return c <= 0
            case .greater: return c > 0
            case .greaterOrEqual: return c >= 0
            default: return false
            }
        }
    }

    private static func nullSafeEqual(_ a: AttributeValue, _ b: AttributeValue, _ type: AttributeType, _ options: TextOptions) -> Bool {
        if a.isNull || b.isNull { return a.isNull && b.isNull }
        return order(a, b, type, options) == 0
    }

    /// Orders two non-null values of an attribute type; nulls (if any) sort first.
    static func order(_ a: AttributeValue, _ b: AttributeValue, _ type: AttributeType, _ options: TextOptions) -> Int {
        var x = StoredScalar(a)
        var y = StoredScalar(b)
        if type == .decimal, case .text(let s) = x, case .text(let t) = y,
            let c = TextSemantics.compareDecimalText(s, t)
        {
            return c
        }
        if !options.isEmpty {
            if case .text(let s) = x { x = .text(TextSemantics.fold(s, options)) }
            if case .text(let t) = y { y = .text(TextSemantics.fold(t, options)) }
        }
        return StoredScalar.order(x, y)
    }

    /// An object's values for a list of sort descriptors, read once: sorting or placing many
    /// objects compares these instead of resolving key paths on every comparison. A nil step in
    /// a key path reads as null (nulls sort first); a value that cannot be read (a fault whose
    /// row cannot be loaded) throws, rather than sort as null.
    package struct SortKey {
        let values: [(type: AttributeType, value: AttributeValue)]
        let id: ManagedObjectID

        package init(_ object: ManagedObject, _ sorts: [ObjectSortDescriptor]) throws(AmbarError) {
            var values: [(type: AttributeType, value: AttributeValue)] = []
            values.reserveCapacity(sorts.count)
            for sort in sorts {
                let (attribute, value) = try PredicateEvaluation.resolveAttribute(sort.key, on: object)
                values.append((attribute.type, value))
            }
            self.values = values
            id = object.objectID
        }
    }

    /// Whether `object` sorts before the object whose key is `key`, ties broken by primary key:
    /// one side read before and the other read as it is compared, with nothing allocated (a
    /// binary search probes many objects once each). Throws when a value of `object` cannot be
    /// read.
    package static func precedes(_ object: ManagedObject, _ key: SortKey, _ sorts: [ObjectSortDescriptor]) throws(AmbarError) -> Bool {
        for (i, sort) in sorts.enumerated() {
            let (attribute, value) = try resolveAttribute(sort.key, on: object)
            let c = compare(value, key.values[i].value, attribute.type, sort)
            if c != 0 { return c < 0 }
        }
        return idPrecedes(object.objectID, key.id)
    }

    /// Whether `a` sorts before `b` under `sorts`, ties broken by primary key (keys read before).
    package static func precedes(_ a: SortKey, _ b: SortKey, _ sorts: [ObjectSortDescriptor]) -> Bool {
        for (i, sort) in sorts.enumerated() {
            let c = compare(a.values[i].value, b.values[i].value, a.values[i].type, sort)
            if c != 0 { return c < 0 }
        }
        return idPrecedes(a.id, b.id)
    }

    /// How two values compare under one sort descriptor (negative, zero or positive): nulls
    /// first, the descriptor's text options and direction applied.
    private static func compare(_ x: AttributeValue, _ y: AttributeValue, _ type: AttributeType, _ sort: ObjectSortDescriptor) -> Int {
        let c = x.isNull || y.isNull ? (x.isNull == y.isNull ? 0 : (x.isNull ? -1 : 1)) : order(x, y, type, sort.options)
        return sort.ascending ? c : -c
    }

    /// Permanent IDs by primary key, then temporary IDs in insertion order.
    static func idPrecedes(_ a: ManagedObjectID, _ b: ManagedObjectID) -> Bool {
        switch (a.key, b.key) {
        case (.permanent(let x), .permanent(let y)): return x == y ? a.entityName < b.entityName : x < y
        case (.permanent, .temporary): return true
        case (.temporary, .permanent): return false
        case (.temporary(let x), .temporary(let y)): return x < y
        }
    }
}
