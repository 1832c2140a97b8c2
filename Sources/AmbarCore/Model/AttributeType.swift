/// The type of an entity attribute, and so of the column that stores it.
///
/// Every type maps to one SQLite storage class; ``AttributeValue`` holds the value in memory.
public enum AttributeType: String, Codable, Sendable, Hashable, CaseIterable {
    /// Text, stored as SQLite TEXT and compared byte-wise on its UTF-8 form.
    case string
    /// A 16-bit signed integer.
    case integer16
    /// A 32-bit signed integer.
    case integer32
    /// A 64-bit signed integer.
    case integer64
    /// A 64-bit floating-point number.
    case double
    /// A 32-bit floating-point number.
    case float
    /// A Boolean, stored as 0 or 1.
    case boolean
    /// A point in time, stored as seconds since 2001-01-01 (REAL), as Core Data stores it.
    case date
    /// Arbitrary bytes, stored as a BLOB.
    case binary
    /// A UUID, stored as its canonical upper-case text.
    case uuid
    /// A URL, stored as its absolute string.
    case uri
    /// An exact decimal number, stored as text so that no precision is lost.
    case decimal
    /// A value kept as bytes and turned into a Swift type by a named ``AttributeTransformer``
    /// (Core Data's *Transformable*): stored as a BLOB, held in memory as ``AttributeValue/data(_:)``.
    /// See ``AttributeDescription/valueTransformerName`` and ``AttributeTransformers``.
    case transformable
    /// Any value (Core Data's *Undefined*): allowed on transient attributes only, which are never
    /// stored.
    case undefined

    /// The article and name used in messages: "an integer16", "a string".
    package var withArticle: String {
        let name = rawValue
        return ("aeiou".contains(name.first ?? "x") ? "an " : "a ") + name
    }

    /// Whether values of this type are integers in memory.
    package var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: return true
        default: return false
        }
    }

    /// The SQLite column type used in `CREATE TABLE`.
    var sqlColumnType: String {
        switch self {
        case .string, .uuid, .uri, .decimal: return "TEXT"
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .double, .float, .date: return "REAL"
        case .binary, .transformable, .undefined: return "BLOB"
        }
    }
}
