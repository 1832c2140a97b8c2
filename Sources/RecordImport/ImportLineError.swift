import Foundation

/// Why a line cannot be imported: its number, the field at fault (if one is) and the reason.
public struct ImportLineError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The 1-based line number.
    public let line: Int
    /// The field at fault, if one is.
    public let field: String?
    /// What is wrong, in words.
    public let reason: String

    /// An error for `line`, naming `field` when one is at fault.
    public init(line: Int, field: String?, reason: String) {
        self.line = line
        self.field = field
        self.reason = reason
    }

    /// "line N: field "f": reason", as the importer prints it.
    public var description: String {
        if let field { return "line \(line): field \"\(field)\": \(reason)" }
        return "line \(line): \(reason)"
    }

    /// The error as a JSON object.
    public var json: [String: Any] { ["line": line, "field": field ?? NSNull(), "message": reason] }
}
