// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation

    /// `/v1/status`, made at most once per `maximumAge` however many clients ask (the status
    /// page asks up to four times a second, each open tab): making it counts every entity's
    /// objects and asks the hub for its peers over a connection of its own, which a request must
    /// not cost. Callers that arrive while it is being made wait for that one.
    actor StatusCache {
        /// How old an answer may be (one second in `serve`).
        let maximumAge: Duration

        private let make: @Sendable () async throws -> Data
        private var cached: (made: ContinuousClock.Instant, report: Data)?
        private var making: Task<Data, any Error>?

        /// A cache of what `make` returns.
        init(maximumAge: Duration = .seconds(1), _ make: @escaping @Sendable () async throws -> Data) {
            self.maximumAge = maximumAge
            self.make = make
        }

        /// The report, made now if the last one is older than `maximumAge`.
        func report() async throws -> Data {
            let clock = ContinuousClock()
            if let cached, cached.made.duration(to: clock.now) < maximumAge { return cached.report }
            if let making { return try await making.value }
            let started = clock.now
            let task = Task { try await make() }
            making = task
            defer { making = nil }
            let report = try await task.value
            cached = (started, report)
            return report
        }
    }
#endif
