import AmbarCore
import AmbarSQL
import Foundation
import GRDB

/// The SQL functions and collation every connection of a store registers, so that SQL evaluates
/// predicates with the very code in-memory evaluation uses.
enum SQLiteFunctions {
    static let fold = DatabaseFunction("ambar_fold", argumentCount: 2, pure: true) { args in
        guard let s = text(args[0]) else { return nil }
        let flags = Int.fromDatabaseValue(args[1]) ?? 0
        return TextSemantics.fold(s, TextOptions(rawValue: flags))
    }

    static let textMatch = DatabaseFunction("ambar_text", argumentCount: 4, pure: true) { args in
        guard let opName = String.fromDatabaseValue(args[0]), let op = TextOperator(rawValue: opName),
            let value = text(args[2]), let pattern = text(args[3])
        else { return 0 }
        let flags = Int.fromDatabaseValue(args[1]) ?? 0
        // A runaway MATCHES throws: GRDB makes its description the statement's error message,
        // and SQLiteValues.wrap gives it back as the invalid predicate it is.
        return try TextSemantics.matches(op, value, pattern, TextOptions(rawValue: flags)) ? 1 : 0
    }

    static let decimalCompare = DatabaseFunction("ambar_deccmp", argumentCount: 2, pure: true) { args in
        guard let a = text(args[0]), let b = text(args[1]) else { return nil }
        return TextSemantics.compareDecimalText(a, b)
    }

    static let decimalCollation = DatabaseCollation("ambar_decimal") { a, b in
        let c = TextSemantics.compareDecimalText(a, b) ?? TextSemantics.compareBytes(a, b)
        return c < 0 ? .orderedAscending : (c > 0 ? .orderedDescending : .orderedSame)
    }

    /// Registers everything on `db`.
    static func register(on db: Database) {
        db.add(function: fold)
        db.add(function: textMatch)
        db.add(function: decimalCompare)
        db.add(collation: decimalCollation)
    }

    /// The text of a value as the store keeps it (numbers rendered, as for decimals written by
    /// other SQLite clients).
    private static func text(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .null: return nil
        case .string(let s): return s
        case .int64(let v): return String(v)
        case .double(let d): return String(d)
        case .blob(let data): return String(data: data, encoding: .utf8)
        }
    }
}
