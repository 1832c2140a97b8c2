// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import Foundation
    import Hummingbird
    import SharedStoreIPC

    /// The routes of `sync-agent serve`, apart from the server that runs them (the command's
    /// listener, or a socket-activated one), so that they can be tested in process.
    enum ServeRouter {
        /// The router over `stack`, shared through `sync`: with a `token`, every route but the
        /// status page (`/`, which holds no data) wants it as `Authorization: Bearer`; with a
        /// `localGuard` (a listener that takes no token), requests must be sent to a loopback
        /// name and come from no other origin.
        static func make(
            stack: DataStack, sync: SharedStoreSync, reads: StoreReadPool, streams: StreamSlots, broadcast: ChangeBroadcast,
            memory: StreamMemory = StreamMemory(), token: String?, localGuard: LocalRequestGuard? = nil,
            directory: DirectoryOptions,
            socketPath: String
        ) -> Router<ServeContext> {
            let router = Router(context: ServeContext.self)
            if let localGuard { router.add(middleware: localGuard) }
            // The status page holds no data: it is served without the token and asks for it.
            if let token { router.add(middleware: BearerTokenMiddleware(token: token, openPaths: ["/"])) }
            let latency = MergeLatencyLog(sync: sync)
            let changes = ChangeStreamEndpoint(sync: sync, stack: stack, reads: reads, slots: streams, broadcast: broadcast, memory: memory)
            let objects = ObjectsEndpoint(stack: stack, reads: reads)
            router.get("/v1/changes") { request, context in try await changes.response(request, context: context) }
            router.get("/v1/objects/:entity") { request, context in
                if let refusal = await ReadAfterToken.wait(for: request, sync: sync) { return refusal }
                return try await objects.response(request, context: context)
            }
            router.get("/") { _, _ in StatusPage.response() }
            router.get("/v1/latency") { _, _ in ServeResponses.json(try latency.json()) }
            // The store's part read on the read pool; the hub asked over a connection of its own at
            // most every 2 s, however many ask.
            let target = Locked<StatusCommand.HubTarget?>(nil)
            let hub = SingleFlightCache(maximumAge: .seconds(2)) { () async throws -> StatusCommand.HubAnswer in
                guard let asked = target.withLock({ $0 }) else { return StatusCommand.HubAnswer() }
                return try await StatusCommand.askHub(asked, socketPath: socketPath)
            }
            let status = SingleFlightCache {
                let store = try await reads.read { try StatusCommand.storeReport(stack: stack, directory: directory, socketPath: socketPath) }
                target.withLock { $0 = store.hub }
                return try store.with(hub: try await hub.value(for: 0)).jsonLine()
            }
            router.get("/v1/status") { request, _ in
                if let refusal = await ReadAfterToken.wait(for: request, sync: sync) { return refusal }
                // The ledger's head, one small read: a report made before the last commit is not served.
                let coordinator = try stack.writerCoordinator
                return ServeResponses.json(try await status.value(for: try await reads.read { try coordinator.currentHistoryToken() }))
            }
            return router
        }
    }
#endif
