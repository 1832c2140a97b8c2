import Foundation

#if !canImport(Darwin)
    extension PredicateExpressions {
        /// `localizedStandardContains` in a `#Predicate`: whether a string contains another, ignoring
        /// case and diacritics, as Foundation on Apple platforms has it (Foundation on Linux does not
        /// have the expression, so SwiftData code that writes it would not compile here).
        public struct LocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
        where Root.Output: StringProtocol, Other.Output: StringProtocol {
            /// The string searched.
            public let root: Root
            /// The string searched for.
            public let other: Other

            /// The expression `root.localizedStandardContains(other)`.
            public init(root: Root, other: Other) {
                self.root = root
                self.other = other
            }

            /// Whether `root` contains `other`, ignoring case and diacritics.
            public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
                let text = String(try root.evaluate(bindings))
                let pattern = String(try other.evaluate(bindings))
                return text.range(of: pattern, options: [.caseInsensitive, .diacriticInsensitive]) != nil
            }
        }

        /// What `#Predicate` writes for `root.localizedStandardContains(other)`.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other) -> LocalizedStandardContains<Root, Other> {
            LocalizedStandardContains(root: root, other: other)
        }
    }

    extension PredicateExpressions.LocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}
    extension PredicateExpressions.LocalizedStandardContains: Codable where Root: Codable, Other: Codable {}
    extension PredicateExpressions.LocalizedStandardContains: StandardPredicateExpression
    where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

    extension PredicateExpressions.LocalizedStandardContains: ObjectPredicateCompilable {
        func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
            try PredicateCompilation.text(
                try compilation.compile(root), .contains, try compilation.compile(other), options: [.caseInsensitive, .diacriticInsensitive])
        }
    }
#endif
