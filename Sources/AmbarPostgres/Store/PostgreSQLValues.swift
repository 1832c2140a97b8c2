import AmbarCore
import AmbarSQL
import Foundation

/// Conversions between attribute values and the values a PostgreSQL store sends and reads.
///
/// Values are kept as SQLite keeps them (``StoredScalar``): integers and booleans as `bigint`,
/// doubles and dates (seconds since 2001) as `double precision`, text (and UUIDs and URIs) as
/// `text` in the byte-wise "C" collation, data as `bytea` — except decimals, which are exact
/// `numeric`. So predicates compare exactly as they do on SQLite and in memory.
enum PostgreSQLValues {
    /// The value sent for an attribute value.
    static func serverValue(_ value: AttributeValue) -> SQLServerValue {
        if case .decimal(let d) = value { return .numeric(d.description) }
        return serverValue(StoredScalar(value))
    }

    /// The value sent for a stored scalar.
    static func serverValue(_ scalar: StoredScalar) -> SQLServerValue {
        switch scalar {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .real(let d): return .real(d)
        case .text(let s): return .text(s)
        case .blob(let d): return .blob(d)
        }
    }

    /// The stored scalar of a value the server returned.
    static func scalar(_ value: SQLServerValue) -> StoredScalar {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .real(let d): return .real(d)
        case .text(let s), .numeric(let s): return .text(s)
        case .blob(let d): return .blob(d)
        case .boolean(let b): return .integer(b ? 1 : 0)
        case .integerArray, .textArray, .column: return .null
        }
    }

    /// The attribute value of `type` a returned value stands for (`.null` when it does not fit).
    static func attributeValue(_ value: SQLServerValue, _ type: AttributeType) -> AttributeValue {
        scalar(value).attributeValue(type) ?? .null
    }

    static func integer(_ value: SQLServerValue) -> Int64? {
        switch value {
        case .integer(let v): return v
        case .real(let d): return Int64(exactly: d)
        case .numeric(let s), .text(let s): return Int64(s)
        default: return nil
        }
    }

    static func text(_ value: SQLServerValue) -> String? {
        switch value {
        case .text(let s), .numeric(let s): return s
        case .integer(let v): return String(v)
        default: return nil
        }
    }

    static func real(_ value: SQLServerValue) -> Double? {
        switch value {
        case .real(let d): return d
        case .integer(let v): return Double(v)
        case .numeric(let s): return Double(s)
        default: return nil
        }
    }

    /// The PostgreSQL type of a column of a root table: `numeric` when every attribute stored
    /// in it is a decimal, else the type of its SQLite affinity.
    static func columnType(sqlType: String, attributeTypes: [AttributeType]) -> String {
        if !attributeTypes.isEmpty && attributeTypes.allSatisfy({ $0 == .decimal }) { return "numeric" }
        switch sqlType {
        case "INTEGER": return "bigint"
        case "REAL": return "double precision"
        case "BLOB": return "bytea"
        default: return "text COLLATE \"C\""
        }
    }

    /// The SQL cast that makes a parameter fit a column type (`$3::bigint`).
    static func cast(_ columnType: String) -> String {
        columnType.hasPrefix("text") ? "::text" : "::\(columnType)"
    }
}
