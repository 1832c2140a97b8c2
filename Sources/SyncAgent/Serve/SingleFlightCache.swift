// Built with the package trait HTTP (a default trait).
#if HTTP

    /// A value made at most once per `maximumAge` for one key, however many ask; callers that
    /// arrive while it is being made for the same key wait for that one, and a new key makes it
    /// again at once. A failure is not kept.
    ///
    /// `serve` keeps `/v1/status` in one, keyed by the ledger's head (the status page asks up to
    /// four times a second, each open tab, and after each commit must see it): making it counts
    /// every entity's objects, which a request must not cost. The hub's answer to a `peers`
    /// request, which takes a connection of its own, is kept in another for a few seconds.
    actor SingleFlightCache<Value: Sendable> {
        /// How old a value for the same key may be.
        let maximumAge: Duration

        private let make: @Sendable () async throws -> Value
        private var cached: (head: Int64, made: ContinuousClock.Instant, report: Value)?
        private var making: (head: Int64, serial: Int, task: Task<Value, any Error>)?
        private var serial = 0

        /// A cache of what `make` returns.
        init(maximumAge: Duration = .seconds(1), _ make: @escaping @Sendable () async throws -> Value) {
            self.maximumAge = maximumAge
            self.make = make
        }

        /// The value for `head` (the key): the cached one if it was made for that key less than
        /// `maximumAge` ago, else made now.
        func value(for head: Int64) async throws -> Value {
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
