import AmbarCore

/// The statements one connection has prepared: a name for each text and set of parameter types,
/// given out in order (`ambar_1`, `ambar_2`, …), and at most ``limit`` of them.
///
/// A shape is prepared the second time it is sent: a statement sent once (an import's last,
/// shorter batch) is not worth the round trip that preparing takes. Texts longer than
/// ``longestText`` are never prepared (a many-row insert: its values cost more than its plan).
/// The server keeps a prepared statement until the session ends, and postgres-nio offers no way
/// to drop one, so past the limit statements are sent unnamed, as before (parsed and planned on
/// every call). A shape whose preparation failed — a table that was missing, a plan whose result
/// changed with the schema — is forgotten, and its next call prepares it again under a new name.
struct PreparedShapes {
    /// Statement names given out at most on one connection.
    static let limit = 256
    /// The longest text prepared, in UTF-8 bytes.
    static let longestText = 16_384
    /// Shapes remembered as sent once, at most (then forgotten all together).
    static let sightingsKept = 1_024

    /// A statement's text and the kind of each of its values.
    struct Key: Hashable {
        let sql: String
        let kinds: [UInt8]

        init(sql: String, parameters: [SQLServerValue]) {
            self.sql = sql
            self.kinds = parameters.map(Self.kind)
        }

        /// What decides the type a value is bound with (NULL: the server infers it).
        private static func kind(_ value: SQLServerValue) -> UInt8 {
            switch value {
            case .null: 0
            case .integer: 1
            case .real: 2
            case .text: 3
            case .numeric: 4
            case .blob: 5
            case .boolean: 6
            case .integerArray: 7
            case .textArray: 8
            case .column(.integers): 9
            case .column(.reals): 10
            case .column(.texts): 11
            case .column(.blobs): 12
            }
        }
    }

    private var names: [Key: (name: String, prepared: Bool)] = [:]
    private var given = 0
    /// The hashes of shapes sent once, unnamed.
    private var seenOnce: Set<Int> = []

    /// The name of `key`'s statement (a new one the second time it is sent); `nil` when it is to
    /// be sent unnamed.
    mutating func name(for key: Key) -> String? {
        if let entry = names[key] { return entry.name }
        guard given < Self.limit, key.sql.utf8.count <= Self.longestText else { return nil }
        guard seenOnce.remove(key.hashValue) != nil else {
            if seenOnce.count >= Self.sightingsKept { seenOnce.removeAll() }
            seenOnce.insert(key.hashValue)
            return nil
        }
        given += 1
        let name = "ambar_\(given)"
        names[key] = (name, false)
        return name
    }

    /// Records that `key`'s statement ran: the server has it prepared.
    mutating func ran(_ key: Key) {
        if let entry = names[key], !entry.prepared { names[key] = (entry.name, true) }
    }

    /// Records that `key`'s statement failed with SQLSTATE `state` (`nil`: no answer). A
    /// statement that never ran may have failed to prepare, and postgres-nio then refuses its
    /// name for good: it is forgotten. One that ran before is forgotten when the server says its
    /// plan or name is no longer good (classes 0A, 26 and 42), not when its values were refused.
    mutating func failed(_ key: Key, state: String?) {
        guard let entry = names[key] else { return }
        if !entry.prepared || state.map({ $0.hasPrefix("0A") || $0.hasPrefix("26") || $0.hasPrefix("42") }) ?? true {
            names[key] = nil
        }
    }
}
