import AmbarCore
import Foundation

/// Compiles predicates and sort descriptors to parameterised SQL for an Ambar store (SQLite or
/// PostgreSQL), with the semantics ``PredicateEvaluation`` implements in memory.
///
/// Values are always bound, never written into the SQL, so the text depends only on the
/// predicate's shape: the store keeps one prepared statement per shape (see `StatementShape`).
/// On PostgreSQL, text compared with options (`[c]`, `[d]`) and the text operators are decided by
/// the client over the column's distinct values (``ClientTest``), so both backends give exactly
/// the results of in-memory evaluation.
package struct SQLQueryBuilder {
    /// One FROM scope: a table alias and the joins made for key paths through to-one relationships.
    final class Scope {
        let alias: String
        let layout: EntityLayout
        /// The scope an `EXISTS` or a counted subquery over a to-many relationship was opened
        /// from: what ``ObjectExpression/outer(_:levels:)`` and ``ObjectPredicate/enclosing(_:)`` read.
        let parent: Scope?
        var joins: [String] = []
        var joined: [String: (alias: String, layout: EntityLayout)] = [:]

        init(alias: String, layout: EntityLayout, parent: Scope? = nil) {
            self.alias = alias
            self.layout = layout
            self.parent = parent
        }
    }

    let model: ResolvedModel
    let entityIDs: [String: Int64]
    let dialect: SQLDialect
    package private(set) var arguments: [BoundValue] = []
    /// Joins the ORDER BY needs (PostgreSQL's client-ranked text), added after the scope's own.
    private(set) var orderJoins: [String] = []
    private var aliasCounter = 0

    package init(model: ResolvedModel, entityIDs: [String: Int64], dialect: SQLDialect = .sqlite) {
        self.model = model
        self.entityIDs = entityIDs
        self.dialect = dialect
    }

    /// `SELECT <what> FROM <root> AS t0 … WHERE … ORDER BY …` for a query, without its window
    /// (each backend adds LIMIT/OFFSET its way); the builder holds the parameters.
    package mutating func select(_ what: (String) -> String, _ query: StoreQuery, ordered: Bool) throws(AmbarError) -> (sql: String, layout: EntityLayout) {
        let layout = try model.layout(query.entity)
        let scope = Scope(alias: "t0", layout: layout)
        var conditions: [String] = []
        if let filter = entityFilter(layout, alias: "t0", includesSubentities: query.includesSubentities) {
            conditions.append(filter)
        }
        if let predicate = query.predicate { conditions.append(try compile(predicate, in: scope)) }
        let order = ordered ? try orderBy(query.sortDescriptors, in: scope) : nil
        var sql = "SELECT \(what("t0")) FROM \(quoted(layout.rootName)) AS t0"
        let joins = scope.joins + orderJoins
        if !joins.isEmpty { sql += " " + joins.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if let order { sql += " ORDER BY " + order }
        return (sql, layout)
    }

    /// The SQL for a boolean constant.
    func literal(_ value: Bool) -> String {
        switch dialect {
        case .sqlite: return value ? "1" : "0"
        case .postgres: return value ? "TRUE" : "FALSE"
        }
    }

    /// Null-safe equality (`IS`) or inequality (`IS NOT`).
    func nullSafe(_ equal: Bool) -> String {
        switch dialect {
        case .sqlite: return equal ? "IS" : "IS NOT"
        case .postgres: return equal ? "IS NOT DISTINCT FROM" : "IS DISTINCT FROM"
        }
    }

    /// Appends a parameter; returns its placeholder.
    package mutating func placeholder(_ value: BoundValue) -> String {
        arguments.append(value)
        switch dialect {
        case .sqlite: return "?"
        case .postgres:
            switch value {
            case .decimal: return "$\(arguments.count)::numeric"
            case .integers: return "$\(arguments.count)::bigint[]"
            case .clientSet: return "$\(arguments.count)::text[]"
            case .clientRanks: return "$\(arguments.count)::text[]"
            case .clientRanksSecondHalf: return "$\(arguments.count)::bigint[]"
            case .scalar(.blob): return "$\(arguments.count)::bytea"
            case .scalar: return "$\(arguments.count)"
            }
        }
    }

    mutating func newAlias(_ prefix: String) -> String {
        aliasCounter += 1
        return "\(prefix)\(aliasCounter)"
    }

    /// The `Z_ENT` filter for an entity (and its sub-entities), or nil when the table holds only it.
    func entityFilter(_ layout: EntityLayout, alias: String, includesSubentities: Bool) -> String? {
        let rootLayout = model.entities[layout.rootName]
        let all = rootLayout?.selfAndDescendants.count ?? 1
        let wanted = includesSubentities ? layout.selfAndDescendants : [layout.name]
        if wanted.count == all { return nil }
        let ids = wanted.compactMap { entityIDs[$0] }.map(String.init).joined(separator: ", ")
        return "\(alias).Z_ENT IN (\(ids))"
    }

    /// Follows the to-one relationships of `path` (all but the last component), adding joins.
    mutating func holder(_ path: String, in scope: Scope) throws(AmbarError) -> (alias: String, layout: EntityLayout, last: String) {
        let parts = path.split(separator: ".").map(String.init)
        guard let last = parts.last else { throw .invalidPredicate("empty key path") }
        var alias = scope.alias
        var layout = scope.layout
        var prefix = ""
        for name in parts.dropLast() {
            guard let i = layout.relationshipIndex[name], !layout.relationships[i].isToMany else {
                throw .invalidPredicate("'\(name)' in key path '\(path)' is not a to-one relationship of '\(layout.name)'")
            }
            prefix += (prefix.isEmpty ? "" : ".") + name
            let destination = try model.layout(layout.relationships[i].description.destination)
            if let existing = scope.joined[prefix] {
                alias = existing.alias
            } else {
                let joinAlias = newAlias("j")
                guard layout.relationshipColumns[i] != nil else {
                    throw .invalidPredicate("'\(name)' in key path '\(path)' is a transient relationship: it is not in the store, so a fetch cannot follow it")
                }
                scope.joins.append(
                    "LEFT JOIN \(quoted(destination.rootName)) AS \(joinAlias) ON \(joinAlias).Z_PK = \(alias).\(quoted(layout.column(ofRelationship: i)))")
                scope.joined[prefix] = (joinAlias, destination)
                alias = joinAlias
            }
            layout = destination
        }
        return (alias, layout, last)
    }

    /// A stored attribute reached by a key path: its SQL, description, table and column.
    struct ColumnReference {
        let sql: String
        let attribute: AttributeDescription
        let table: String
        let column: String
    }

    /// The column of the attribute at `path`.
    mutating func attributeColumn(_ path: String, in scope: Scope) throws(AmbarError) -> (sql: String, attribute: AttributeDescription) {
        let reference = try attributeReference(path, in: scope)
        return (reference.sql, reference.attribute)
    }

    /// The column of the attribute at `path`, with the table that holds it.
    mutating func attributeReference(_ path: String, in scope: Scope) throws(AmbarError) -> ColumnReference {
        let (alias, layout, last) = try holder(path, in: scope)
        guard let i = layout.attributeIndex[last] else {
            if layout.relationshipIndex[last] != nil {
                throw .invalidPredicate("'\(path)' is a relationship; compare attributes, or use ToOneKey / ToManyKey")
            }
            throw .unknownProperty(entity: layout.name, property: last)
        }
        let column = try layout.column(ofAttribute: i)
        return ColumnReference(sql: "\(alias).\(quoted(column))", attribute: layout.attributes[i], table: layout.rootName, column: column)
    }

    mutating func bind(_ value: AttributeValue) -> String {
        if dialect == .postgres, case .decimal(let d) = value { return placeholder(.decimal(d.description)) }
        return placeholder(.scalar(StoredScalar(value)))
    }

    private func textExpression(_ sql: String, _ options: TextOptions, _ type: AttributeType) -> String {
        guard !options.isEmpty, [.string, .uuid, .uri].contains(type) else { return sql }
        return "ambar_fold(\(sql), \(options.rawValue))"
    }

    /// Whether the client decides comparisons of this column (PostgreSQL, text with options).
    private func decidedByClient(_ options: TextOptions, _ type: AttributeType) -> Bool {
        dialect == .postgres && !options.isEmpty && [.string, .uuid, .uri].contains(type)
    }

    /// `column` is one of the distinct values that pass `test` (never NULL; a NULL value gives
    /// `nullResult`).
    private mutating func clientDecided(_ reference: ColumnReference, nullResult: Bool, _ test: @escaping @Sendable (String) throws(AmbarError) -> Bool)
        -> String
    {
        let set = placeholder(.clientSet(ClientTest(table: reference.table, column: reference.column, test: test)))
        return nullResult
            ? "(\(reference.sql) IS NULL OR \(reference.sql) = ANY(\(set)))"
            : "COALESCE(\(reference.sql) = ANY(\(set)), FALSE)"
    }

    /// Compiles a predicate to an SQL boolean expression that is never NULL.
    mutating func compile(_ predicate: ObjectPredicate, in scope: Scope) throws(AmbarError) -> String {
        if let rewritten = try PredicateResolution.rewrite(predicate, layout: scope.layout, lookup: { model.entities[$0] }) {
            return try compile(rewritten, in: scope)
        }
        switch predicate {
        case .quantified:
            throw .invalidPredicate("\(predicate) cannot be resolved against '\(scope.layout.name)'")
        case .constant(let b):
            return literal(b)
        case .and(let parts):
            if parts.isEmpty { return literal(true) }
            var compiled: [String] = []
            for p in parts { compiled.append(try compile(p, in: scope)) }
            return "(" + compiled.joined(separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return literal(false) }
            var compiled: [String] = []
            for p in parts { compiled.append(try compile(p, in: scope)) }
            return "(" + compiled.joined(separator: " OR ") + ")"
        case .not(let p):
            return "NOT \(try compile(p, in: scope))"
        case .objectIn(let ids):
            let pks = ids.filter { model.entities[$0.entityName]?.rootName == scope.layout.rootName }.compactMap(\.primaryKey)
            if pks.isEmpty { return literal(false) }
            if dialect == .postgres { return "\(scope.alias).Z_PK = ANY(\(placeholder(.integers(pks))))" }
            _ = bind(.string(StatementShape.idList(pks)))
            return "\(scope.alias).Z_PK \(StatementShape.inIDList)"
        case .keyComparison(let lhs, let op, let rhs, let options):
            let a = try operand(lhs, in: scope)
            let b = try operand(rhs, in: scope)
            let type = try KeyComparisonTypes.common(a.type, b.type, predicate)
            return try keyComparison(a, op, b, type, options, predicate)
        case .comparison(let key, let op, let value, let options):
            let reference = try attributeReference(key, in: scope)
            let param = try PredicateEvaluation.coerce(value, to: reference.attribute, key: key)
            if decidedByClient(options, reference.attribute.type), !param.isNull {
                let type = reference.attribute.type
                return clientDecided(reference, nullResult: op == .notEqual) { text in
                    guard let value = StoredScalar.text(text).attributeValue(type) else { return false }
                    return PredicateEvaluation.compare(value, op, param, type, options)
                }
            }
            return comparison(reference.sql, reference.attribute.type, op, param, options)
        case .isIn(let key, let values, let options):
            let reference = try attributeReference(key, in: scope)
            let (column, attribute) = (reference.sql, reference.attribute)
            var params: [AttributeValue] = []
            for v in values {
                let p = try PredicateEvaluation.coerce(v, to: attribute, key: key)
                if !p.isNull { params.append(p) }
            }
            if params.isEmpty { return literal(false) }
            if decidedByClient(options, attribute.type) {
                let type = attribute.type
                let candidates = params
                return clientDecided(reference, nullResult: false) { text in
                    guard let value = StoredScalar.text(text).attributeValue(type) else { return false }
                    return candidates.contains { PredicateEvaluation.compare(value, .equal, $0, type, options) }
                }
            }
            if attribute.type == .decimal {
                return "(" + StatementShape.padded(params).map { comparison(column, .decimal, .equal, $0, []) }.joined(separator: " OR ") + ")"
            }
            let lhs = textExpression(column, options, attribute.type)
            let list = StatementShape.padded(params).map { textExpression(bind($0), options, attribute.type) }.joined(separator: ", ")
            return "(\(column) IS NOT NULL AND \(lhs) IN (\(list)))"
        case .between(let key, let lower, let upper):
            let (column, attribute) = try attributeColumn(key, in: scope)
            let lo = try PredicateEvaluation.coerce(lower, to: attribute, key: key)
            let hi = try PredicateEvaluation.coerce(upper, to: attribute, key: key)
            return "(" + comparison(column, attribute.type, .greaterOrEqual, lo, []) + " AND "
                + comparison(column, attribute.type, .lessOrEqual, hi, []) + ")"
        case .text(let key, let op, let pattern, let options):
            let reference = try attributeReference(key, in: scope)
            let (column, attribute) = (reference.sql, reference.attribute)
            guard [.string, .uuid, .uri].contains(attribute.type) else {
                throw .invalidPredicate("'\(key)' is not text; \(op.rawValue) needs a string attribute")
            }
            if dialect == .postgres {
                return clientDecided(reference, nullResult: false) { value throws(AmbarError) in try TextSemantics.matches(op, value, pattern, options) }
            }
            let p = bind(.string(pattern))
            return "ambar_text('\(op.rawValue)', \(options.rawValue), \(column), \(p))"
        case .relationship(let key, let target):
            let (alias, layout, last) = try holder(key, in: scope)
            guard let i = layout.relationshipIndex[last], !layout.relationships[i].isToMany else {
                throw .invalidPredicate("'\(key)' is not a to-one relationship of '\(layout.name)'")
            }
            guard layout.relationshipColumns[i] != nil else {
                throw .invalidPredicate("'\(key)' is a transient relationship: it is not in the store, so a fetch cannot use it")
            }
            let column = "\(alias).\(quoted(layout.column(ofRelationship: i)))"
            guard let target else { return "\(column) IS NULL" }
            guard let pk = target.primaryKey else { return literal(false) }
            return "(\(column) IS NOT NULL AND \(column) = \(bind(.integer(pk))))"
        case .any(let key, let sub):
            let (from, link, destination) = try toManyLink(key, in: scope)
            let inner = Scope(alias: from.alias, layout: destination, parent: scope)
            let condition = try compile(sub, in: inner)
            return "EXISTS (SELECT 1 FROM \(from.sql) \(inner.joins.joined(separator: " ")) WHERE \(link) AND \(condition))"
        case .subquery(let key, let sub, let op, let count):
            let (from, link, destination) = try toManyLink(key, in: scope)
            let inner = Scope(alias: from.alias, layout: destination, parent: scope)
            let condition = try compile(sub, in: inner)
            let counted = "SELECT COUNT(*) FROM \(from.sql) \(inner.joins.joined(separator: " ")) WHERE \(link) AND \(condition)"
            return "((\(counted)) \(op.sqlOperator) \(bind(.integer(Int64(count)))))"
        case .enclosing(let sub):
            guard let parent = scope.parent else {
                throw .invalidPredicate("\(sub) is read on the object an enclosing ANY or SUBQUERY ranges from, but there is none")
            }
            return try compile(sub, in: parent)
        case .count(let key, let op, let count):
            let (from, link, _) = try toManyLink(key, in: scope)
            return "((SELECT COUNT(*) FROM \(from.sql) WHERE \(link)) \(op.sqlOperator) \(bind(.integer(Int64(count)))))"
        case .aggregate(let key, let function, let attributeName, let op, let value):
            let (from, link, destination) = try toManyLink(key, in: scope)
            let (attribute, param) = try PredicateEvaluation.aggregateOperand(function, attributeName, value, destination, key: key)
            let expression = try aggregateExpression(function, attribute, from: from, link: link, destination: destination)
            switch op {
            case .equal: return param.isNull ? "(\(expression) IS NULL)" : "(\(expression) \(nullSafe(true)) \(bind(param)))"
            case .notEqual: return param.isNull ? "(\(expression) IS NOT NULL)" : "(\(expression) \(nullSafe(false)) \(bind(param)))"
            default: return param.isNull ? literal(false) : "COALESCE(\(expression) \(op.sqlOperator) \(bind(param)), \(literal(false)))"
            }
        }
    }

    /// `(SELECT <function>(column) FROM … WHERE link)` over a to-many relationship's destinations.
    private func aggregateExpression(
        _ function: AggregateFunction, _ attribute: AttributeDescription, from: (sql: String, alias: String), link: String, destination: EntityLayout
    ) throws(AmbarError) -> String {
        guard let i = destination.attributeIndex[attribute.name] else { throw .unknownProperty(entity: destination.name, property: attribute.name) }
        let column = "\(from.alias).\(quoted(try destination.column(ofAttribute: i)))"
        let sqlFunction: String
        switch function {
        case .count: sqlFunction = "COUNT(\(column))"
        case .sum:
            if attribute.type.isInteger || attribute.type == .boolean {
                sqlFunction = "COALESCE(SUM(\(column)), 0)"
            } else {
                sqlFunction = dialect == .postgres ? "COALESCE(SUM(\(column)::float8), 0.0)" : "COALESCE(TOTAL(\(column)), 0.0)"
            }
        case .avg: sqlFunction = "AVG(\(column))"
        case .min: sqlFunction = "MIN(\(column))"
        case .max: sqlFunction = "MAX(\(column))"
        }
        return "(SELECT \(sqlFunction) FROM \(from.sql) WHERE \(link))"
    }

    /// The SQL of one side of a key-path comparison, and its type.
    private mutating func operand(_ expression: ObjectExpression, in scope: Scope) throws(AmbarError) -> (sql: String, type: AttributeType) {
        switch expression {
        case .key(let path):
            let reference = try attributeReference(path, in: scope)
            return (reference.sql, reference.attribute.type)
        case .outer(let path, let levels):
            var enclosing: Scope? = levels >= 1 ? scope : nil
            for _ in 0..<max(levels, 0) { enclosing = enclosing?.parent }
            guard let enclosing else {
                throw .invalidPredicate("'\(path)' reads the object \(levels) enclosing ANY or SUBQUERY range(s) out, but there are fewer enclosing ranges")
            }
            let reference = try attributeReference(path, in: enclosing)
            return (reference.sql, reference.attribute.type)
        case .count(let path):
            let (from, link, _) = try toManyLink(path, in: scope)
            return ("(SELECT COUNT(*) FROM \(from.sql) WHERE \(link))", .integer64)
        case .aggregate(let path, let function, let attributeName):
            let (from, link, destination) = try toManyLink(path, in: scope)
            let (attribute, _) = try PredicateEvaluation.aggregateOperand(function, attributeName, .null, destination, key: path)
            let sql = try aggregateExpression(function, attribute, from: from, link: link, destination: destination)
            return (sql, PredicateEvaluation.aggregateType(function, attribute.type))
        }
    }

    /// `lhs op rhs` for two values of the object, compared as `type` (see `KeyComparisonTypes`).
    private mutating func keyComparison(
        _ lhs: (sql: String, type: AttributeType), _ op: ComparisonOperator, _ rhs: (sql: String, type: AttributeType), _ type: AttributeType,
        _ options: TextOptions, _ predicate: ObjectPredicate
    ) throws(AmbarError) -> String {
        var (a, b) = (lhs.sql, rhs.sql)
        if dialect == .postgres && KeyComparisonTypes.isNumber(type) {
            // PostgreSQL compares booleans with booleans only.
            if lhs.type == .boolean { a = "(\(a))::int" }
            if rhs.type == .boolean { b = "(\(b))::int" }
        }
        let bothPresent = "\(a) IS NOT NULL AND \(b) IS NOT NULL"
        if type == .decimal && dialect == .sqlite {
            let test = "(\(bothPresent) AND ambar_deccmp(\(a), \(b)) \(op == .notEqual ? "=" : op.sqlOperator) 0)"
            switch op {
            case .equal: return "((\(a) IS NULL AND \(b) IS NULL) OR \(test))"
            case .notEqual: return "NOT ((\(a) IS NULL AND \(b) IS NULL) OR \(test))"
            default: return test
            }
        }
        if !options.isEmpty && [.string, .uuid, .uri].contains(type) {
            guard dialect == .sqlite else {
                throw .invalidPredicate(
                    "\(predicate): comparing two text key paths with [c] or [d] is not supported on PostgreSQL stores (compare one of them with a value, or filter in memory)"
                )
            }
            (a, b) = (textExpression(a, options, type), textExpression(b, options, type))
        }
        switch op {
        case .equal: return "(\(a) \(nullSafe(true)) \(b))"
        case .notEqual: return "(\(a) \(nullSafe(false)) \(b))"
        default: return "(\(bothPresent) AND \(a) \(op.sqlOperator) \(b))"
        }
    }

    /// The FROM clause and link condition of a to-many relationship's destinations.
    private mutating func toManyLink(_ key: String, in scope: Scope) throws(AmbarError) -> (
        from: (sql: String, alias: String), link: String, destination: EntityLayout
    ) {
        let (alias, layout, last) = try holder(key, in: scope)
        guard let i = layout.relationshipIndex[last], layout.relationships[i].isToMany else {
            throw .invalidPredicate("'\(key)' is not a to-many relationship of '\(layout.name)'")
        }
        let relationship = layout.relationships[i]
        let destination = try model.layout(relationship.description.destination)
        let d = newAlias("d")
        switch relationship.mapping {
        case .inverseForeignKey(let destinationRoot, let column):
            return (("\(quoted(destinationRoot)) AS \(d)", d), "\(d).\(quoted(column)) = \(alias).Z_PK", destination)
        case .joinTable(let table, let own, let other):
            let j = newAlias("m")
            let from = "\(quoted(table)) AS \(j) JOIN \(quoted(destination.rootName)) AS \(d) ON \(d).Z_PK = \(j).\(other)"
            return ((from, d), "\(j).\(own) = \(alias).Z_PK", destination)
        case .foreignKey:
            throw .invalidPredicate("'\(key)' is not a to-many relationship")
        case .transient:
            throw .invalidPredicate("'\(key)' is a transient relationship: it is not in the store, so a fetch cannot use it")
        }
    }

    private mutating func comparison(_ column: String, _ type: AttributeType, _ op: ComparisonOperator, _ param: AttributeValue, _ options: TextOptions)
        -> String
    {
        if type == .decimal {
            if param.isNull {
                switch op {
                case .equal: return "\(column) IS NULL"
                case .notEqual: return "\(column) IS NOT NULL"
                default: return literal(false)
                }
            }
            let test: String
            switch dialect {
            case .sqlite: test = "(\(column) IS NOT NULL AND ambar_deccmp(\(column), \(bind(param))) \(op == .notEqual ? "=" : op.sqlOperator) 0)"
            case .postgres: test = "(\(column) IS NOT NULL AND \(column) \(op == .notEqual ? "=" : op.sqlOperator) \(bind(param)))"
            }
            return op == .notEqual ? "NOT \(test)" : test
        }
        let lhs = textExpression(column, options, type)
        switch op {
        case .equal:
            if param.isNull { return "\(column) IS NULL" }
            // Plain `=` (with NULL ruled out, so that NOT around it still holds for a missing
            // value), not the null-safe form: PostgreSQL can find `=` in an index, never
            // `IS NOT DISTINCT FROM`, and a lookup by a unique key would read the whole table.
            return "(\(column) IS NOT NULL AND \(lhs) = \(textExpression(bind(param), options, type)))"
        case .notEqual:
            if param.isNull { return "\(column) IS NOT NULL" }
            return "(\(lhs) \(nullSafe(false)) \(textExpression(bind(param), options, type)))"
        default:
            if param.isNull { return literal(false) }
            return "(\(column) IS NOT NULL AND \(lhs) \(op.sqlOperator) \(textExpression(bind(param), options, type)))"
        }
    }

    /// The ORDER BY clause for `sorts`, ties broken by primary key.
    mutating func orderBy(_ sorts: [ObjectSortDescriptor], in scope: Scope) throws(AmbarError) -> String {
        var terms: [String] = []
        for sort in sorts {
            let reference = try attributeReference(sort.key, in: scope)
            let (column, attribute) = (reference.sql, reference.attribute)
            switch dialect {
            case .sqlite:
                var expression = textExpression(column, sort.options, attribute.type)
                if attribute.type == .decimal { expression = "\(column) COLLATE ambar_decimal" }
                terms.append("\(expression) \(sort.ascending ? "ASC" : "DESC")")
            case .postgres:
                // NULL first when ascending, as SQLite (and in-memory order) put it.
                let nulls = sort.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST"
                if decidedByClient(sort.options, attribute.type) {
                    let rank = newAlias("r")
                    let values = placeholder(.clientRanks(ClientRanking(table: reference.table, column: reference.column, options: sort.options)))
                    let ranks = placeholder(.clientRanksSecondHalf)
                    orderJoins.append("LEFT JOIN unnest(\(values), \(ranks)) AS \(rank)(v, r) ON \(rank).v = \(column)")
                    terms.append("\(rank).r \(nulls)")
                } else {
                    terms.append("\(column) \(nulls)")
                }
            }
        }
        terms.append("\(scope.alias).Z_PK ASC")
        return terms.joined(separator: ", ")
    }
}

extension ComparisonOperator {
    var sqlOperator: String {
        switch self {
        case .equal: return "="
        case .notEqual: return "<>"
        case .less: return "<"
        case .lessOrEqual: return "<="
        case .greater: return ">"
        case .greaterOrEqual: return ">="
        }
    }
}
