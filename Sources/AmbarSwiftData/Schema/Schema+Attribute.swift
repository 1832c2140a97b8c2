import AmbarStack

extension Schema {
    /// What SwiftData calls an attribute: here, the options `@Attribute` takes.
    public enum Attribute {
        /// An option of `@Attribute`.
        public struct Option: Sendable, Hashable {
            enum Kind: Hashable, Sendable {
                case unique, externalStorage, allowsCloudEncryption, preserveValueOnDeletion, spotlight, ephemeral, codable
                case transformable(String)
            }
            let kind: Kind

            /// No two models may share the value (an upsert when an inserted model does).
            public static let unique = Option(kind: .unique)
            /// Accepted: the value is stored in the row, however large (SQLite and PostgreSQL
            /// keep large values out of line themselves).
            public static let externalStorage = Option(kind: .externalStorage)
            /// Accepted and ignored: there is no CloudKit here.
            public static let allowsCloudEncryption = Option(kind: .allowsCloudEncryption)
            /// The value is kept in the history's record of the model's deletion.
            public static let preserveValueOnDeletion = Option(kind: .preserveValueOnDeletion)
            /// Accepted and ignored: there is no Spotlight here.
            public static let spotlight = Option(kind: .spotlight)
            /// Tracked like any attribute, never written to the store.
            public static let ephemeral = Option(kind: .ephemeral)
            /// Stored as its `Codable` encoding (JSON), which is how any `Codable` value that is
            /// not a plain attribute type is stored anyway.
            public static let codable = Option(kind: .codable)

            /// Stored through the value transformer registered under `name`
            /// (`ValueTransformer.setValueTransformer(_:forName:)`).
            public static func transformable(by name: String) -> Option { Option(kind: .transformable(name)) }

            #if canImport(Darwin)
                /// Stored through `transformerType`, registered under its type's name.
                public static func transformable(by transformerType: ValueTransformer.Type) -> Option {
                    Option(kind: .transformable(String(describing: transformerType)))
                }
            #else
                /// Stored as its `Codable` JSON: Foundation on Linux has no `ValueTransformer`, so
                /// `transformerType` is recorded by name only.
                public static func transformable(by transformerType: Any.Type) -> Option {
                    Option(kind: .transformable(String(describing: transformerType)))
                }
            #endif
        }
    }
}
