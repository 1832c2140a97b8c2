import AmbarCore
import Foundation

/// One line of NDJSON input, decoded for an entity.
public struct ImportRecord: Sendable {
    /// The 1-based line number in the input.
    public let line: Int
    /// The values to set, by attribute name (only the fields present in the line).
    public let values: [String: AttributeValue]
    /// The upsert key's value, when importing with `--key`.
    public let key: AttributeValue?
    /// The related objects to set, by relationship name (only the relationships present in the
    /// line).
    public let references: [String: ImportReference]

    /// A record of `values` from line `line`, with the upsert key's value when there is one and
    /// the relationships to set.
    public init(line: Int, values: [String: AttributeValue], key: AttributeValue?, references: [String: ImportReference] = [:]) {
        self.line = line
        self.values = values
        self.key = key
        self.references = references
    }
}
