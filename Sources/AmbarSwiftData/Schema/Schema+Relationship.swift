import AmbarStack

extension Schema {
    /// What SwiftData calls a relationship: here, the options `@Relationship` takes.
    public enum Relationship {
        /// What deleting a model does to the models its relationship leads to.
        public enum DeleteRule: String, Sendable, Hashable, Codable {
            /// The destinations stay; their relationship back is cleared.
            case nullify
            /// The destinations are deleted too.
            case cascade
            /// The delete is refused (the save throws) while the relationship is not empty.
            case deny
            /// Nothing happens to the destinations.
            case noAction

            var ambar: AmbarStack.DeleteRule {
                switch self {
                case .nullify: return .nullify
                case .cascade: return .cascade
                case .deny: return .deny
                case .noAction: return .noAction
                }
            }
        }

        /// An option of `@Relationship`.
        public struct Option: Sendable, Hashable {
            let isUnique: Bool
            /// Accepted: a to-one relationship that no two models may share is kept by its
            /// inverse's delete rule and the store's constraints.
            public static let unique = Option(isUnique: true)
        }
    }
}
