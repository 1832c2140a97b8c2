import Dispatch
import Foundation

/// Waits for SIGTERM or SIGINT.
enum TerminationSignal {
    /// Suspends until the process receives SIGTERM or SIGINT; returns the signal.
    static func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let fired = Mutex(false)
            var sources: [any DispatchSourceSignal] = []
            for signalNumber in [SIGTERM, SIGINT] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    let first = fired.withLock { done -> Bool in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: signalNumber) }
                }
                source.resume()
                sources.append(source)
            }
            Retained.sources = sources
        }
    }

    /// Keeps the signal sources alive for the life of the process.
    private enum Retained {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    }
}

import Synchronization
