import AmbarCore
import AmbarSQL
import Foundation

/// One statement of a save's inserts: new rows of one entity at version 1, `ON CONFLICT DO
/// NOTHING` (so a refused row is counted, not an error that aborts the transaction).
struct PostgreSQLInsert {
    let sql: String
    let parameters: [SQLServerValue]
    /// The rows it inserts.
    let rows: ArraySlice<NewRow>
    /// Whether it sends a column's values as one array (`unnest`): its text is then the same for
    /// any number of rows, and it is worth preparing.
    let isArrays: Bool
}

extension PostgreSQLStore {
    /// Rows in one `unnest` insert at most.
    static let rowsPerArrayInsert = 10_000
    /// Parameters in one `VALUES` insert at most (PostgreSQL's bound is 65,535).
    static let parametersPerValuesInsert = 30_000

    /// The statements that insert `rows`: up to ``rowsPerArrayInsert`` rows in one statement
    /// whose parameters are a column's values each (`INSERT … SELECT … FROM unnest($1::bigint[],
    /// …)`). Rows whose values do not all have their column's type (a value SQLite's typing let
    /// through) go as `VALUES` lists of at most ``parametersPerValuesInsert`` parameters, each
    /// cast to its column, as any value always could. Placeholders are numbered from
    /// `firstParameter` in each statement, or onward through all of them when `numberedOnward`
    /// (statements that go in one `WITH`). `nil` for an entity the store does not number.
    func insertStatements(_ layout: EntityLayout, _ rows: ArraySlice<NewRow>, firstParameter: Int, numberedOnward: Bool) -> [PostgreSQLInsert]? {
        guard let entityID = entityIDs[layout.name] else { return nil }
        let columns = InsertColumns(layout: layout, types: columnTypes[layout.rootName] ?? [:])
        var statements: [PostgreSQLInsert] = []
        var first = firstParameter
        func add(_ statement: PostgreSQLInsert) {
            statements.append(statement)
            if numberedOnward { first += statement.parameters.count }
        }
        for start in stride(from: rows.startIndex, to: rows.endIndex, by: Self.rowsPerArrayInsert) {
            let chunk = rows[start..<min(start + Self.rowsPerArrayInsert, rows.endIndex)]
            if let statement = arrayInsert(columns, entityID: entityID, chunk, firstParameter: first) {
                add(statement)
                continue
            }
            let rowsPerStatement = max(1, Self.parametersPerValuesInsert / (3 + columns.names.count))
            for part in stride(from: chunk.startIndex, to: chunk.endIndex, by: rowsPerStatement) {
                add(valuesInsert(columns, entityID: entityID, chunk[part..<min(part + rowsPerStatement, chunk.endIndex)], firstParameter: first))
            }
        }
        return statements
    }

    /// `INSERT … SELECT … FROM unnest(…)`: one array parameter per column, NULLs included;
    /// `nil` when a value does not have its column's type.
    private func arrayInsert(_ columns: InsertColumns, entityID: Int64, _ rows: ArraySlice<NewRow>, firstParameter p: Int) -> PostgreSQLInsert? {
        var arrays: [SQLServerValue] = [.column(.integers(rows.map(\.primaryKey))), .integer(entityID)]
        for (index, type) in columns.types.enumerated() {
            guard let array = Self.array(of: rows.map { columns.value(index, of: $0, entityIDs: entityIDs) }, type: type) else { return nil }
            arrays.append(.column(array))
        }
        let names = columns.names.indices.map { "v\($0)" }
        let unnested = (["$\(p)::bigint[]"] + columns.types.enumerated().map { i, type in "$\(p + 2 + i)::\(Self.arrayCast(type))" }).joined(separator: ", ")
        let sql = """
            INSERT INTO \(quoted(columns.root)) (\((["Z_PK", "Z_ENT", "Z_OPT"] + columns.names.map(quoted)).joined(separator: ", "))) \
            SELECT \((["u.k", "$\(p + 1)::bigint", "1"] + names.map { "u.\($0)" }).joined(separator: ", ")) \
            FROM unnest(\(unnested)) AS u(\((["k"] + names).joined(separator: ", "))) ON CONFLICT DO NOTHING
            """
        return PostgreSQLInsert(sql: sql, parameters: arrays, rows: rows, isArrays: true)
    }

    /// `INSERT … VALUES (…), (…) …`: a parameter per value, each cast to its column.
    private func valuesInsert(_ columns: InsertColumns, entityID: Int64, _ rows: ArraySlice<NewRow>, firstParameter: Int) -> PostgreSQLInsert {
        var tuples: [String] = []
        var parameters: [SQLServerValue] = []
        parameters.reserveCapacity(rows.count * (columns.names.count + 3))
        for row in rows {
            let first = firstParameter + parameters.count
            tuples.append(
                "($\(first), $\(first + 1), $\(first + 2), "
                    + placeholders(root: columns.root, columns: columns.names, from: first + 3).joined(separator: ", ") + ")")
            parameters += [.integer(row.primaryKey), .integer(entityID), .integer(1)]
            for index in columns.names.indices { parameters.append(columns.value(index, of: row, entityIDs: entityIDs)) }
        }
        let columnList = (["Z_PK", "Z_ENT", "Z_OPT"] + columns.names.map(quoted)).joined(separator: ", ")
        return PostgreSQLInsert(
            sql: "INSERT INTO \(quoted(columns.root)) (\(columnList)) VALUES \(tuples.joined(separator: ", ")) ON CONFLICT DO NOTHING",
            parameters: parameters, rows: rows, isArrays: false)
    }

    /// A column's values as one array of the column's type; `nil` when one does not have it.
    private static func array(of values: [SQLServerValue], type: String) -> SQLServerColumn? {
        switch type {
        case "bigint":
            var integers: [Int64?] = []
            integers.reserveCapacity(values.count)
            for value in values {
                switch value {
                case .null: integers.append(nil)
                case .integer(let v): integers.append(v)
                default: return nil
                }
            }
            return .integers(integers)
        case "double precision":
            var reals: [Double?] = []
            reals.reserveCapacity(values.count)
            for value in values {
                switch value {
                case .null: reals.append(nil)
                case .real(let d): reals.append(d)
                default: return nil
                }
            }
            return .reals(reals)
        case "bytea":
            var blobs: [Data?] = []
            blobs.reserveCapacity(values.count)
            for value in values {
                switch value {
                case .null: blobs.append(nil)
                case .blob(let d): blobs.append(d)
                default: return nil
                }
            }
            return .blobs(blobs)
        default:
            // text, and numeric (sent as its text and cast: see arrayCast).
            let numeric = type == "numeric"
            var texts: [String?] = []
            texts.reserveCapacity(values.count)
            for value in values {
                switch value {
                case .null: texts.append(nil)
                case .text(let s) where !numeric: texts.append(s)
                case .numeric(let s) where numeric: texts.append(s)
                default: return nil
                }
            }
            return .texts(texts)
        }
    }

    /// The array type a column of `type` is sent as, with its cast.
    private static func arrayCast(_ type: String) -> String {
        switch type {
        case "bigint", "double precision", "bytea": "\(type)[]"
        case "numeric": "text[]::numeric[]"
        default: "text[]"
        }
    }
}

/// The columns an insert of one entity writes after `Z_PK`, `Z_ENT` and `Z_OPT`: its stored
/// attributes, then each to-one relationship's key (and entity) column.
private struct InsertColumns {
    let layout: EntityLayout
    let root: String
    let names: [String]
    /// Each column's PostgreSQL type (`bigint`, `text COLLATE "C"`, …).
    let types: [String]
    private let toOne: [ResolvedRelationship]
    /// For each column after the attributes: its relationship, and whether it is the entity column.
    private let relationshipColumns: [(relationship: Int, isEntity: Bool)]

    init(layout: EntityLayout, types: [String: String]) {
        self.layout = layout
        self.root = layout.rootName
        let toOne = layout.relationships.filter { !$0.isToMany && layout.relationshipColumns[$0.index] != nil }
        var names = layout.storedAttributes.map { layout.attributeColumns[$0] ?? "" }
        var relationshipColumns: [(Int, Bool)] = []
        for (n, rel) in toOne.enumerated() {
            names.append(layout.column(ofRelationship: rel.index))
            relationshipColumns.append((n, false))
            if let column = rel.entityColumn {
                names.append(column)
                relationshipColumns.append((n, true))
            }
        }
        self.names = names
        self.types = names.map { types[$0] ?? "text" }
        self.toOne = toOne
        self.relationshipColumns = relationshipColumns
    }

    /// Column `index`'s value in `row`.
    func value(_ index: Int, of row: NewRow, entityIDs: [String: Int64]) -> SQLServerValue {
        let attributes = layout.storedAttributes
        if index < attributes.count { return PostgreSQLValues.serverValue(row.values[attributes[index]]) }
        let (n, isEntity) = relationshipColumns[index - attributes.count]
        let destination = row.toOne[safe: toOne[n].index] ?? nil
        if isEntity { return destination.flatMap { entityIDs[$0.entityName] }.map { .integer($0) } ?? .null }
        return destination?.primaryKey.map { .integer($0) } ?? .null
    }
}
