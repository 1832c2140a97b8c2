import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite

/// Conversions between attribute values and SQLite values.
enum SQLiteValues {
    /// The database value stored for an attribute value.
    static func databaseValue(_ value: AttributeValue) -> DatabaseValue {
        switch StoredScalar(value) {
        case .null: return .null
        case .integer(let v): return v.databaseValue
        case .real(let d): return d.databaseValue
        case .text(let s): return s.databaseValue
        case .blob(let d): return d.databaseValue
        }
    }

    /// Runs a bound INSERT (or UPDATE) once and resets it. Returns false when a constraint
    /// refused the row (the caller says which); any other failure throws SQLite's error.
    static func stepInsert(_ statement: SQLiteStatement, _ db: Database) throws -> Bool {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        if code == SQLITE_DONE { return true }
        if code & 0xFF == SQLITE_CONSTRAINT { return false }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }

    /// Binds a stored value to parameter `index` of `statement`.
    static func bind(_ scalar: StoredScalar, to statement: SQLiteStatement, at index: Int32) {
        switch scalar {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let v): sqlite3_bind_int64(statement, index, v)
        case .real(let d): sqlite3_bind_double(statement, index, d)
        case .text(let s): bind(.string(s), to: statement, at: index)
        case .blob(let d): bind(.data(d), to: statement, at: index)
        }
    }

    /// Binds `value` to parameter `index` of `statement` (text and blobs are copied by SQLite).
    @inline(__always)
    static func bind(_ value: AttributeValue, to statement: SQLiteStatement, at index: Int32) {
        switch value {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let v): sqlite3_bind_int64(statement, index, v)
        case .double(let d): sqlite3_bind_double(statement, index, d)
        case .bool(let b): sqlite3_bind_int64(statement, index, b ? 1 : 0)
        case .string(var s):
            s.withUTF8 { bytes in
                _ = bytes.withMemoryRebound(to: CChar.self) { text in
                    if let base = text.baseAddress, !text.isEmpty {
                        sqlite3_bind_text(statement, index, base, Int32(text.count), transient)
                    } else {
                        sqlite3_bind_text(statement, index, emptyText, 0, nil)  // empty, not NULL
                    }
                }
            }
        case .data(let d):
            if d.isEmpty {
                sqlite3_bind_zeroblob(statement, index, 0)
            } else {
                d.withUnsafeBytes { _ = sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
            }
        default:
            switch StoredScalar(value) {
            case .null: sqlite3_bind_null(statement, index)
            case .integer(let v): sqlite3_bind_int64(statement, index, v)
            case .real(let d): sqlite3_bind_double(statement, index, d)
            case .text(let s): bind(.string(s), to: statement, at: index)
            case .blob(let d): bind(.data(d), to: statement, at: index)
            }
        }
    }

    /// A C string that lives as long as the process: "" bound without a copy.
    nonisolated(unsafe) private static let emptyText: UnsafePointer<CChar> = UnsafePointer(strdup("")!)

    /// SQLite's SQLITE_TRANSIENT: the bound bytes are copied before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// The database value for a stored scalar.
    static func databaseValue(_ scalar: StoredScalar) -> DatabaseValue {
        switch scalar {
        case .null: return .null
        case .integer(let v): return v.databaseValue
        case .real(let d): return d.databaseValue
        case .text(let s): return s.databaseValue
        case .blob(let d): return d.databaseValue
        }
    }

    /// The stored scalar of a database value.
    static func scalar(_ value: DatabaseValue) -> StoredScalar {
        switch value.storage {
        case .null: return .null
        case .int64(let v): return .integer(v)
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .blob(let d): return .blob(d)
        }
    }

    /// Reads column `index` of the current row of `statement` as an attribute of `type`.
    /// Values that do not fit the type (written by another SQLite client) read as `nil`.
    @inline(__always)
    static func read(_ statement: SQLiteStatement, _ index: Int32, _ type: AttributeType) -> AttributeValue {
        // Text and bytes are read by their pointer, NULL for a NULL column (an empty blob's is
        // NULL too, told apart by the column's type): one call fewer than asking the type first.
        switch type {
        case .string:
            guard let pointer = sqlite3_column_text(statement, index) else { return .null }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .string(String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
        case .binary, .transformable, .undefined:
            guard let bytes = sqlite3_column_blob(statement, index) else {
                return sqlite3_column_type(statement, index) == SQLITE_NULL ? .null : .data(Data())
            }
            return .data(Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, index))))
        case .integer16, .integer32, .integer64, .boolean, .double, .float, .date, .uuid, .uri, .decimal:
            let columnType = sqlite3_column_type(statement, index)
            if columnType == SQLITE_NULL { return .null }
            switch type {
            case .boolean: return .bool(sqlite3_column_int64(statement, index) != 0)
            case .double, .float: return .double(sqlite3_column_double(statement, index))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, index)))
            case .uuid: return UUID(uuidString: text(statement, index)).map { .uuid($0) } ?? .null
            case .uri: return URL(string: text(statement, index)).map { .url($0) } ?? .null
            case .decimal:
                if columnType == SQLITE_INTEGER { return .decimal(Decimal(sqlite3_column_int64(statement, index))) }
                return Decimal(string: text(statement, index), locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) } ?? .null
            default:  // .integer16, .integer32, .integer64 (the other kinds are read above)
                return .integer(sqlite3_column_int64(statement, index))
            }
        }
    }

    @inline(__always)
    static func text(_ statement: SQLiteStatement, _ index: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// A failed write as ``AmbarError/storeFull(path:operation:)``,
    /// ``AmbarError/tooManyOpenFiles(operation:limit:)`` or
    /// ``AmbarError/storeReadOnly(path:reason:)`` when SQLite's result code or the system error
    /// behind it (`systemErrno`, from `sqlite3_system_errno`) says so; `nil` for anything else.
    static func resourceFailure(_ error: DatabaseError, systemErrno: Int32, path: String, _ operation: String) -> AmbarError? {
        let fullErrnos: Set<Int32> = [ENOSPC, EFBIG, EDQUOT]
        if error.resultCode == .SQLITE_FULL || (error.resultCode == .SQLITE_IOERR && fullErrnos.contains(systemErrno)) {
            return .storeFull(path: path, operation: operation)
        }
        if systemErrno == EMFILE || systemErrno == ENFILE || (error.resultCode == .SQLITE_CANTOPEN && DescriptorBudget.isShort(of: 8)) {
            return .tooManyOpenFiles(operation: operation, limit: DescriptorBudget.limit)
        }
        if error.resultCode == .SQLITE_READONLY || systemErrno == EROFS {
            var fileSystem = statvfs()
            let mountedReadOnly = systemErrno == EROFS || (statvfs(path, &fileSystem) == 0 && fileSystem.f_flag & UInt(ST_RDONLY) != 0)
            let reason = mountedReadOnly ? "its file system is mounted read-only" : (error.message ?? "SQLite opened it read-only")
            return .storeReadOnly(path: path, reason: reason)
        }
        return nil
    }

    /// Maps any error from GRDB to an ``AmbarError``.
    static func wrap(_ error: any Error, _ operation: String) -> AmbarError {
        if let ambar = error as? AmbarError { return ambar }
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_CANTOPEN, DescriptorBudget.isShort(of: 8) {
            return .tooManyOpenFiles(operation: operation, limit: DescriptorBudget.limit)
        }
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_ERROR, let message = db.message,
            ["Expression tree is too large", "too many SQL variables", "too many terms in compound SELECT", "parser stack overflow"]
                .contains(where: message.contains)
        {
            // A query SQLite cannot take because of its size is the request's fault, not the store's.
            return .invalidPredicate(
                "the predicate is too large for the store during \(operation) (SQLite: \(message)); write a long OR chain over one property as `property IN {…}`, or split the fetch"
            )
        }
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_ERROR, let message = db.message,
            let marker = message.range(of: RegularExpressions.runawayMarker)
        {
            // SQLite passes on the reason SQLiteFunctions' MATCHES threw, as text.
            var reason = String(message[marker.lowerBound...])
            if reason.hasSuffix(".") { reason.removeLast() }
            return .invalidPredicate(reason)
        }
        if let db = error as? DatabaseError {
            return .storage(operation: operation, code: db.extendedResultCode.rawValue, message: db.message ?? "\(db)", cause: ErrorCause(db))
        }
        return .storage(operation: operation, code: -1, message: "\(error)", cause: ErrorCause(error))
    }
}

extension SQLiteValues {
    /// The database value of a query parameter (the SQLite dialect binds only scalars).
    static func databaseValue(_ bound: BoundValue) -> DatabaseValue {
        switch bound {
        case .scalar(let scalar): return databaseValue(scalar)
        case .decimal(let text): return text.databaseValue
        case .integers, .clientSet, .clientRanks, .clientRanksSecondHalf: return .null
        }
    }
}
