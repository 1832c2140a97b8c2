import Foundation

/// A request's query, decoded as HTML forms and most HTTP clients encode it
/// (`application/x-www-form-urlencoded`: `+` is a space, `%XX` a byte), so that
/// `?predicate=value+>=+20` and `?predicate=value%20%3E%3D%2020` mean the same.
struct QueryParameters {
    private var values: [(String, String)] = []

    init(_ query: String?) {
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            values.append((Self.decode(parts[0]), parts.count > 1 ? Self.decode(parts[1]) : ""))
        }
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// The first value of `name`.
    subscript(_ name: String) -> String? { values.first { $0.0 == name }?.1 }

    /// Every name and value, in the query's order.
    var pairs: [(name: String, value: String)] { values.map { (name: $0.0, value: $0.1) } }

    /// Every value of `name`, in order.
    func all(_ name: String) -> [String] { values.filter { $0.0 == name }.map(\.1) }
}
