import PostgresNIO

/// A statement the store builds at run time and sends again and again, run through postgres-nio's
/// prepared statements: parsed and planned once per connection, under a name of its own, and
/// executed with its values alone after that.
///
/// postgres-nio names a prepared statement and gives its text through *static* members of a type
/// (one Swift type per statement). The store's statements are built from the model while it
/// runs, so this one type reads them from a task-local value, which
/// `PostgresConnection.execute(_:logger:)` reads in the calling task when it hands the statement
/// to the connection:
///
/// ```swift
/// let shape = RecurringStatement.Shape(name: "ambar_3", sql: "INSERT … RETURNING token")
/// let rows = try await RecurringStatement.$shape.withValue(shape) {
///     try await connection.execute(RecurringStatement(bindings: bindings), logger: logger)
/// }
/// ```
///
/// The parameter types are those of the first call's bindings (a NULL leaves its type to the
/// server), so one name must only ever be used with one text and one set of types: see
/// ``PreparedShapes``.
struct RecurringStatement: PostgresPreparedStatement {
    /// A statement's name on the connection and its text.
    struct Shape: Sendable {
        let name: String
        let sql: String
    }

    /// The shape being executed: set around each call of `execute`.
    @TaskLocal static var shape = Shape(name: "", sql: "")

    static var name: String { shape.name }
    static var sql: String { shape.sql }

    typealias Row = PostgresRow

    /// This call's values.
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
