/// The type two sides of a key-path comparison are compared as, the same for SQL and in memory:
/// numbers with numbers (as integers when both are, else as doubles), and otherwise two values of
/// one type (text with text, dates with dates, decimals with decimals…).
package enum KeyComparisonTypes {
    private static let integers: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean]
    private static let numbers: Set<AttributeType> = integers.union([.double, .float])

    /// The type both sides are compared as, or why they cannot be compared.
    package static func common(_ a: AttributeType, _ b: AttributeType, _ predicate: ObjectPredicate) throws(AmbarError) -> AttributeType {
        if numbers.contains(a) && numbers.contains(b) {
            return integers.contains(a) && integers.contains(b) ? .integer64 : .double
        }
        let comparable: Set<AttributeType> = [.string, .date, .decimal, .uuid, .uri]
        guard a == b, comparable.contains(a) else {
            throw .invalidPredicate(
                "\(predicate) compares \(a.withArticle) with \(b.withArticle); both sides must be numbers, or of the same type (string, date, decimal, UUID or URI)"
            )
        }
        return a
    }

    /// Whether `type` is compared as a number.
    package static func isNumber(_ type: AttributeType) -> Bool { numbers.contains(type) }
}
