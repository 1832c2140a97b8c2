import Foundation

/// Compiles a Foundation `Predicate` (from `#Predicate`) over a declared class into an
/// ``ObjectPredicate``: the same SQL and the same in-memory evaluation as a predicate built with
/// ``Key``.
///
/// Each expression type that has an equivalent conforms to ``ObjectPredicateCompilable``.
/// A subexpression that does not read the object (a captured value, arithmetic on constants) is
/// evaluated once and becomes a constant. Anything else is an
/// ``AmbarError/invalidPredicate(_:)`` that names the expression.
struct PredicateCompilation {
    /// The key path each variable stands for, from the fetched object ("" for the object itself).
    var variables: [PredicateExpressions.VariableID: String] = [:]

    /// Compiles `predicate`, whose variable is the fetched object.
    static func compile<T>(_ predicate: Predicate<T>) throws(AmbarError) -> ObjectPredicate {
        var compilation = PredicateCompilation()
        compilation.variables[predicate.variable.key] = ""
        return try compilation.condition(predicate.expression)
    }

    /// `expression` as a condition: a key path to a Boolean attribute reads as `key == true`.
    mutating func condition(_ expression: Any) throws(AmbarError) -> ObjectPredicate {
        switch try compile(expression) {
        case .condition(let predicate): return predicate
        case .property(let key, .attribute): return .comparison(key: key, op: .equal, value: .bool(true), options: [])
        case .constant(.bool(let value)): return .constant(value)
        case let other: throw .invalidPredicate("\(other) is not a condition in a #Predicate")
        }
    }

    mutating func compile(_ expression: Any) throws(AmbarError) -> CompiledExpression {
        if let compilable = expression as? any ObjectPredicateCompilable {
            return try compilable.compile(&self)
        }
        // A subexpression that does not read the object evaluates to a constant.
        // try?: one that cannot be evaluated alone reads the object: the error below says it has no store equivalent
        if let evaluable = expression as? any PredicateExpression, let value = try? Self.evaluateConstant(evaluable) {
            return try CompiledExpression.fromValue(value)
        }
        throw .invalidPredicate(
            "\(Self.name(of: expression)) in a #Predicate has no equivalent in a store query; use ==, !=, <, <=, >, >=, &&, ||, !, contains, starts(with:), ranges, optional chaining through to-one relationships, and contains(where:), allSatisfy or filter { … }.count on to-many relationships"
        )
    }

    private static func evaluateConstant<E: PredicateExpression>(_ expression: E) throws -> Any {
        try expression.evaluate(PredicateBindings())
    }

    /// The expression's type, without its generic arguments' module prefixes.
    static func name(of expression: Any) -> String {
        String(describing: type(of: expression))
    }

    /// The property `keyPath` names on objects of `type`: its declared name.
    static func propertyName(_ keyPath: AnyKeyPath, on type: Any.Type) throws(AmbarError) -> String {
        if let model = type as? any _QueryableModel.Type {
            guard let name = model._queryablePropertyName(for: keyPath) else {
                throw .invalidPredicate("\(keyPath) is not a stored property of the model \(type) (computed and @Transient properties cannot be queried)")
            }
            return name
        }
        guard let declared = type as? any DeclaredModel.Type else {
            throw .invalidPredicate("\(keyPath) is a key path on \(type), which is not a declared model (@Model) class: key-path queries need one")
        }
        guard let name = declared.declaredName(for: keyPath) else {
            throw .invalidPredicate("\(keyPath) is not a stored property that \(type) declares (computed and @Transient properties cannot be queried)")
        }
        return name
    }
}

/// What a subexpression of a `#Predicate` compiles to.
enum CompiledExpression: CustomStringConvertible {
    /// A condition.
    case condition(ObjectPredicate)
    /// A property of the fetched object, by key path from it ("project.name"; "" for the object
    /// itself), and what kind of property its last step is.
    case property(String, PropertyKind)
    /// The number of objects of a to-many relationship.
    case count(String)
    /// A value.
    case constant(AttributeValue)
    /// Several values (the sequence of `contains`).
    case constants([AttributeValue])
    /// An object, or no object (`nil` compared with a to-one relationship).
    case object(ManagedObjectID?)
    /// A range of values.
    case range(lower: AttributeValue, upper: AttributeValue, closed: Bool)
    /// The objects of a to-many relationship that pass a test (`items.filter { … }`), written
    /// for the destination entity.
    case filtered(String, ObjectPredicate)
    /// How many objects of a to-many relationship pass a test (`items.filter { … }.count`).
    case filteredCount(String, ObjectPredicate)

    /// A captured or computed value, as the store compares it.
    static func fromValue(_ value: Any) throws(AmbarError) -> CompiledExpression {
        switch value {
        case let object as ManagedObject: return .object(object.objectID)
        case let model as any _QueryableModel:
            guard let id = model._queryableObjectID else {
                throw .invalidPredicate("a \(type(of: model)) that was never inserted into a context cannot be compared in a store query")
            }
            return .object(id)
        case let convertible as any AttributeValueConvertible: return .constant(convertible.attributeValue)
        // An enumeration with raw values is stored as its raw value (AmbarSwiftData).
        case let raw as any RawRepresentable: return try fromValue(raw.rawValue)
        case let range as any PredicateRange: return try range.compiledRange()
        case let sequence as any Sequence:
            var values: [AttributeValue] = []
            for element in sequence {
                guard case .constant(let value) = try fromValue(element) else {
                    throw .invalidPredicate("a sequence of \(type(of: element)) values cannot be compared in a store query")
                }
                values.append(value)
            }
            return .constants(values)
        default:
            if case Optional<Any>.none = value { return .constant(.null) }
            throw .invalidPredicate("a value of type \(type(of: value)) cannot be compared in a store query")
        }
    }

    var description: String {
        switch self {
        case .condition(let p): return "the condition \(p)"
        case .property(let key, _): return key.isEmpty ? "the object itself" : "the property '\(key)'"
        case .count(let key): return "the count of '\(key)'"
        case .constant(let v): return "the value \(v)"
        case .constants(let v): return "the values \(v)"
        case .object(let id): return "the object \(id.map(\.description) ?? "nil")"
        case .range(let lower, let upper, _): return "the range \(lower)…\(upper)"
        case .filtered(let key, _): return "the filtered objects of '\(key)'"
        case .filteredCount(let key, _): return "the count of filtered objects of '\(key)'"
        }
    }
}

/// A range a `#Predicate` tests membership in.
protocol PredicateRange {
    func compiledRange() throws(AmbarError) -> CompiledExpression
}

extension ClosedRange: PredicateRange {
    func compiledRange() throws(AmbarError) -> CompiledExpression {
        guard case .constant(let lower) = try CompiledExpression.fromValue(lowerBound),
            case .constant(let upper) = try CompiledExpression.fromValue(upperBound)
        else {
            throw .invalidPredicate("a range of \(Bound.self) cannot be compared in a store query")
        }
        return .range(lower: lower, upper: upper, closed: true)
    }
}

extension Range: PredicateRange {
    func compiledRange() throws(AmbarError) -> CompiledExpression {
        guard case .constant(let lower) = try CompiledExpression.fromValue(lowerBound),
            case .constant(let upper) = try CompiledExpression.fromValue(upperBound)
        else {
            throw .invalidPredicate("a range of \(Bound.self) cannot be compared in a store query")
        }
        return .range(lower: lower, upper: upper, closed: false)
    }
}

/// What kind of property a key path ends at.
enum PropertyKind {
    case attribute, toOne, toMany
}

/// A `#Predicate` expression with an equivalent in a store query.
protocol ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression
}
