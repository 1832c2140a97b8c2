/// One sort key of a fetch or a results controller.
///
/// Ordering is the same in SQL and in memory: `nil` sorts first when ascending, text compares its
/// Unicode scalars (or folded, with options), and ties are broken by primary key.
public struct ObjectSortDescriptor: Sendable, Hashable, Codable {
    /// The key path sorted on (an attribute, optionally behind to-one relationships).
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// Text options (case- or diacritic-insensitive ordering).
    public var options: TextOptions

    /// Creates a sort descriptor.
    public init(key: String, ascending: Bool = true, options: TextOptions = []) {
        self.key = key
        self.ascending = ascending
        self.options = options
    }
}

extension ObjectSortDescriptor {
    enum CodingKeys: String, CodingKey { case key, ascending, options }

    /// Decodes `{"key": "title", "ascending": false, "options": 1}` (ascending by default), or a
    /// string: `"title"`, `"title:desc"` (also `:descending`, `:asc`, `:ascending`).
    public init(from decoder: any Decoder) throws {
        // try?: not the string form: the keyed form is decoded below, and its errors are thrown
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard let key = parts.first, !key.isEmpty else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "a sort descriptor needs a key (\"title\" or \"title:desc\")")
            }
            switch parts.count == 2 ? parts[1].lowercased() : "asc" {
            case "asc", "ascending": self.init(key: key)
            case "desc", "descending": self.init(key: key, ascending: false)
            default:
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "sort descriptor \"\(text)\": the direction after ':' is asc or desc")
            }
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            key: try c.decode(String.self, forKey: .key), ascending: try c.decodeIfPresent(Bool.self, forKey: .ascending) ?? true,
            options: try c.decodeIfPresent(TextOptions.self, forKey: .options) ?? [])
    }

    /// Encodes `{"key", "ascending", "options"}`, options only when there are some.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)
        try c.encode(ascending, forKey: .ascending)
        if !options.isEmpty { try c.encode(options, forKey: .options) }
    }
}
