// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation

    /// `/v1/status`, made at most once per `maximumAge` for one ledger head, however many clients
    /// ask (the status page asks up to four times a second, each open tab): making it counts every
    /// entity's objects and asks the hub for its peers over a connection of its own, which a
    /// request must not cost. A commit makes it again at once (the page asks after each one, and
    /// must see it); callers that arrive while it is being made for the same head wait for that one.
    actor StatusCache {
        /// How old an answer for the same ledger head may be (one second in `serve`).
        let maximumAge: Duration

        private let make: @Sendable () async throws -> Data
        private var cached: (head: Int64, made: ContinuousClock.Instant, report: Data)?
        private var making: (head: Int64, serial: Int, task: Task<Data, any Error>)?
        private var serial = 0

        /// A cache of what `make` returns.
        init(maximumAge: Duration = .seconds(1), _ make: @escaping @Sendable () async throws -> Data) {
            self.maximumAge = maximumAge
            self.make = make
        }

        /// The report at ledger head `head`: the cached one if it was made at that head less than
        /// `maximumAge` ago, else made now.
        func report(head: Int64) async throws -> Data {
            let clock = ContinuousClock()
            if let cached, cached.head == head, cached.made.duration(to: clock.now) < maximumAge { return cached.report }
            if let making, making.head == head { return try await making.task.value }
            let started = clock.now
            let task = Task { try await make() }
            serial += 1
            let mine = serial
            making = (head, mine, task)
            defer { if making?.serial == mine { making = nil } }
            let report = try await task.value
            if (cached?.head ?? .min) <= head { cached = (head, started, report) }
            return report
        }
    }
#endif
