/// The error underneath an ``AmbarError``: the SQLite, PostgreSQL, file-system or decoding error
/// that made an operation fail, kept whole, not only as text.
///
/// The ``AmbarError`` cases that wrap another library's failure carry one (`cause:`), so code
/// that needs more than the message can get the original value back:
///
/// ```swift
/// do {
///     try context.save()
/// } catch .storage(_, let code, _, let cause) {
///     if let sqlite = cause?.error as? DatabaseError { … }  // GRDB's error, as it was thrown
///     print("SQLite said \(code)")
/// } catch {
///     print(error)
/// }
/// ```
///
/// Two causes are equal when their errors are of the same type and read the same; that keeps
/// ``AmbarError`` `Equatable` whatever it wraps.
public struct ErrorCause: Sendable, Equatable, CustomStringConvertible {
    /// The error as it was thrown.
    public let error: any Error

    /// Keeps `error` as the cause of an ``AmbarError``.
    public init(_ error: any Error) {
        self.error = error
    }

    /// The error's own description.
    public var description: String { String(describing: error) }

    /// Whether both wrap errors of one type that read the same.
    public static func == (lhs: ErrorCause, rhs: ErrorCause) -> Bool {
        type(of: lhs.error) == type(of: rhs.error) && String(reflecting: lhs.error) == String(reflecting: rhs.error)
    }
}

extension AmbarError {
    /// The error underneath this one, when it wraps another library's failure (SQLite,
    /// PostgreSQL, the file system, a decoder): the value as it was thrown. `nil` for the cases
    /// that Ambar detects itself.
    public var underlyingError: (any Error)? {
        switch self {
        case .storage(_, _, _, let cause), .storeCannotOpen(_, _, let cause), .serverUnavailable(_, _, _, let cause),
            .transformationFailed(_, _, _, _, let cause):
            return cause?.error
        default:
            return nil
        }
    }
}
