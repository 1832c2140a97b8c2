import Foundation
import XCTest

/// Runs the main run loop (which serves the main dispatch queue) until `condition` holds.
@discardableResult
func pumpMainQueue(timeout: TimeInterval = 10, until condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        RunLoop.main.run(until: Date().addingTimeInterval(0.002))
    }
    return true
}
