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

/// Runs the main run loop until every block enqueued on the main queue before this call has run
/// (a marker block is enqueued behind them; the queue is FIFO). Returns false on timeout.
@discardableResult
func drainMainQueue(timeout: TimeInterval = 10) -> Bool {
    let marker = MainQueueMarker()
    DispatchQueue.main.async { marker.reached = true }
    return pumpMainQueue(timeout: timeout) { marker.reached }
}

/// Set by a block on the main queue and read on the main thread.
private final class MainQueueMarker: @unchecked Sendable {
    var reached = false
}
