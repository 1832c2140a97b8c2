import AmbarCore
import AmbarDataStack
import Foundation
import SharedStoreIPC

/// Runs `body` (a command's work until graceful shutdown). If sharing ends for good first — the
/// store file replaced under the process (a restore) — the body is cancelled and the failure
/// thrown: the command exits non-zero with that message, and its service manager restarts it on
/// the store now at the path.
func untilSharingFails(_ sync: SharedStoreSync, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await until({ await sync.waitForFailure() }, body)
}

/// Runs `body` until it returns, or until `failure` returns an error: then the body is cancelled
/// and the error thrown. (`failure` returning nil leaves the body to finish.)
func until(_ failure: @escaping @Sendable () async -> AmbarError?, _ body: @escaping @Sendable () async throws -> Void) async throws {
    enum Outcome: Sendable {
        case finished
        case failed(AmbarError?)
    }
    let failure = try await withThrowingTaskGroup(of: Outcome.self) { group -> AmbarError? in
        group.addTask {
            try await body()
            return .finished
        }
        group.addTask { .failed(await failure()) }
        while let outcome = try await group.next() {
            switch outcome {
            case .finished:
                group.cancelAll()
                return nil
            case .failed(let error?):
                group.cancelAll()
                return error
            case .failed(nil):
                continue  // no failure to report: the body decides
            }
        }
        return nil
    }
    if let failure { throw failure }
}
