// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation
    import NIOConcurrencyHelpers

    /// The transactions change streams could not send lately, by audience (``StreamAudience/key``):
    /// a stream that ends with `event: error` is a 200 that ends, which an `EventSource` takes as
    /// a reason to reconnect with the same `Last-Event-ID` every 2 s, for ever — meeting the same
    /// transaction again (a `MATCHES` that gives up on a value, say). For ``retention`` after a
    /// failure, a stream of the same audience that would meet it again is refused at once instead
    /// (`422`, with the token and why: `EventSource` stops on it); then it is tried again, since
    /// the objects, read anew, may have changed.
    final class StreamFailures: Sendable {
        struct Failure: Sendable {
            let token: Int64
            let reason: String
            let at: Date
        }

        /// How long a failure refuses streams that would meet it.
        static let retention: TimeInterval = 60
        /// The most failures remembered (the oldest go first).
        static let capacity = 256

        private let failures = NIOLockedValueBox([String: Failure]())

        /// Remembers that streams of `audience` could not send transaction `token`.
        func record(_ failure: ChangeStreamEndpoint.Failure, audience: String, now: Date = Date()) {
            failures.withLockedValue { failures in
                failures[audience] = Failure(token: failure.token, reason: failure.reason, at: now)
                if failures.count > Self.capacity, let oldest = failures.min(by: { $0.value.at < $1.value.at })?.key { failures[oldest] = nil }
            }
        }

        /// The failure a stream of `audience` starting after `position` would meet, if one was
        /// met within ``retention``.
        func failure(audience: String, after position: Int64, now: Date = Date()) -> Failure? {
            failures.withLockedValue { failures in
                guard let failure = failures[audience] else { return nil }
                guard now.timeIntervalSince(failure.at) < Self.retention else {
                    failures[audience] = nil
                    return nil
                }
                return position < failure.token ? failure : nil
            }
        }
    }
#endif
