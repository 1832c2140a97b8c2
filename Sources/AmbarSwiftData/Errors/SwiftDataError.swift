import AmbarStack

/// What went wrong in the SwiftData layer: a ``Code`` to compare with (as SwiftData's errors
/// are compared: `error == .unsupportedPredicate`), a message that says what to do, and the
/// underlying error when there is one (``cause``: an `AmbarError` from the store, most often).
public struct SwiftDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// "loadIssueModelContainer", "unsupportedPredicate", ….
        public var description: String { rawValue }

        /// The container could not open its store.
        public static let loadIssueModelContainer = Code(rawValue: "loadIssueModelContainer")
        /// A `#Predicate` has no equivalent in a store query.
        public static let unsupportedPredicate = Code(rawValue: "unsupportedPredicate")
        /// A `SortDescriptor` cannot sort a store query.
        public static let unsupportedSortDescriptor = Code(rawValue: "unsupportedSortDescriptor")
        /// A history token names changes that were deleted.
        public static let historyTokenExpired = Code(rawValue: "historyTokenExpired")
        /// The models do not make a schema.
        public static let invalidSchema = Code(rawValue: "invalidSchema")
        /// A model class is not in the container's schema.
        public static let modelNotInSchema = Code(rawValue: "modelNotInSchema")
        /// A model belongs to another context.
        public static let modelInAnotherContext = Code(rawValue: "modelInAnotherContext")
        /// A stored value cannot be read as its property's type.
        public static let unreadableValue = Code(rawValue: "unreadableValue")
        /// Saving failed (the cause says why: a validation, a constraint, the store).
        public static let saveFailed = Code(rawValue: "saveFailed")
        /// The configuration does not allow saving.
        public static let saveNotAllowed = Code(rawValue: "saveNotAllowed")
        /// A fetch failed.
        public static let fetchFailed = Code(rawValue: "fetchFailed")
        /// A migration could not run.
        public static let migrationFailed = Code(rawValue: "migrationFailed")
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong and what to do.
    public let message: String
    /// The underlying error, when there is one.
    public let cause: (any Error)?

    /// An error of kind `code`.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message, and the cause's description.
    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }

    /// Errors are equal when their codes are.
    public static func == (lhs: SwiftDataError, rhs: SwiftDataError) -> Bool { lhs.code == rhs.code }

    // SwiftData's spellings, for comparisons: `error == .unsupportedPredicate`.

    /// The container could not open its store.
    public static let loadIssueModelContainer = SwiftDataError(.loadIssueModelContainer, "the container could not open its store")
    /// A `#Predicate` has no equivalent in a store query.
    public static let unsupportedPredicate = SwiftDataError(.unsupportedPredicate, "the predicate has no equivalent in a store query")
    /// A `SortDescriptor` cannot sort a store query.
    public static let unsupportedSortDescriptor = SwiftDataError(.unsupportedSortDescriptor, "the sort descriptor cannot sort a store query")
    /// A history token names changes that were deleted.
    public static let historyTokenExpired = SwiftDataError(.historyTokenExpired, "the history token names changes that were deleted")

    static func missingRelationship(entity: String, property: String) -> SwiftDataError {
        SwiftDataError(
            .unreadableValue,
            "\(entity).\(property) is not optional but the stored object has no destination; declare it optional if it may be empty")
    }

    static func typeMismatch(property: String, expected: String, got: String) -> SwiftDataError {
        SwiftDataError(.unreadableValue, "'\(property)' was given a \(got) where a \(expected) was expected")
    }

    static func invalidSchema(_ schema: Schema, cause: any Error) -> SwiftDataError {
        SwiftDataError(.invalidSchema, "\(schema) does not make a model", cause: cause)
    }

    static func modelNotInSchema(_ type: Any.Type, _ schema: Schema) -> SwiftDataError {
        SwiftDataError(.modelNotInSchema, "\(type) is not in the container's schema (\(schema)); list it in ModelContainer(for:) or a Schema")
    }
}
