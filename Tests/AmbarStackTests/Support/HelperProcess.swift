import AmbarTestSupport
import Foundation
import XCTest

/// Runs the `ambar-test-helper` executable (built beside the test bundle) as a real second process.
enum HelperProcess {
    /// Runs the helper to completion (killing it after `timeout` seconds) and returns its exit
    /// status and standard error.
    @discardableResult
    static func run(_ arguments: [String], timeout: TimeInterval = 30) throws -> (status: Int32, stderr: String) {
        let result = try ProcessRunner.run(BuiltProducts.url("ambar-test-helper"), arguments, timeout: timeout)
        return (result.status, result.error)
    }
}
