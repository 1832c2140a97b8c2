import AmbarStack
import Foundation
import Logging

/// Failures of calls that cannot throw (inserts, property reads and writes, the Ambar
/// context's own reports), kept until the next save throws the first of them.
final class FailureLog: @unchecked Sendable {  // the lock guards the list
    struct Failure {
        let what: String
        let error: any Error
    }
    private let lock = NSLock()
    private var failures: [Failure] = []
    private static let logger = Logger(label: "ambar.swiftdata.context")

    func record(_ what: String, _ error: any Error) {
        Self.logger.error("could not \(what): \(error)")
        lock.withLock { failures.append(Failure(what: what, error: error)) }
    }

    func record(_ failure: ContextFailure) {
        lock.withLock { failures.append(Failure(what: failure.operation, error: failure.error)) }
    }

    /// The first failure recorded, and forgets them all.
    func takeFirst() -> Failure? {
        lock.withLock {
            defer { failures.removeAll() }
            return failures.first
        }
    }
}
