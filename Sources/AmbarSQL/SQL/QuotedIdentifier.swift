import Foundation

/// Quotes an SQL identifier. (Model names never hold a quote, so the common case skips
/// Foundation's `replacingOccurrences`, which costs about a microsecond per call.)
package func quoted(_ identifier: String) -> String {
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"\(identifier)\"" }
    return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
