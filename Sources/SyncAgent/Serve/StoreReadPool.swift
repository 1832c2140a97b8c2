// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOPosix
    import ServiceLifecycle

    /// The threads `serve` reads the store on, and evaluates predicates and encodes objects on:
    /// a bounded pool of its own (`--read-threads`), so that long reads wait for one another there
    /// and never hold Swift's cooperative threads (which every stream, the sharing connection,
    /// `/v1/status` and shutdown run on) or NIO's event loops. Reads beyond the threads wait in
    /// its queue.
    ///
    /// As a service it runs until graceful shutdown and then lets the reads under way finish;
    /// put it first in the group, so that it is shut down after the server.
    final class StoreReadPool: Service, Sendable {
        /// The threads when `--read-threads` is not given.
        static let defaultThreads = 4

        private let pool: NIOThreadPool

        /// A pool of `threads` threads, started.
        init(threads: Int) {
            pool = NIOThreadPool(numberOfThreads: threads)
            pool.start()
        }

        /// `body`'s result, run on one of the pool's threads.
        ///
        /// - Throws: what `body` throws, and NIO's `ThreadPoolInactive` once the pool is shut down.
        func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
            try await pool.runIfActive(body)
        }

        func run() async throws {
            do {
                try await gracefulShutdown()
            } catch {
                // Cancelled rather than shut down gracefully: the threads are stopped all the same.
            }
            try await shutdown()
        }

        /// Stops the threads once the reads under way are done.
        func shutdown() async throws {
            try await pool.shutdownGracefully()
        }
    }
#endif
