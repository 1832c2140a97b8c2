// Built with the package trait TestKits (a default trait, which turns on HTTP as serve needs;
// scripts/run-tsan leaves it off).
#if TestKits
    import AmbarStack
    import AmbarTestSupport
    import Foundation
    import Logging
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import SharedStoreIPC
    import XCTest

    @testable import SyncAgent

    /// `sync-agent serve`'s routes in process, through Hummingbird's test client, over a real
    /// store shared as serve shares it: the bearer token, the objects endpoint and its errors,
    /// the open status page. (`ServeCommandTests` runs the binary over its sockets.)
    final class ServeRouterTests: XCTestCase {
        private var directory: TemporaryDirectory!
        private var stack: DataStack!
        private var reads: StoreReadPool?
        private var sync: SharedStoreSync!

        override func setUp() async throws {
            directory = try TemporaryDirectory()
            stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "serve-router")
            sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
            let context = try stack.importerContext()
            try context.performAndWait { () throws(AmbarError) in
                for (uid, value) in [("a", 1), ("b", 2)] {
                    let item = try context.insertObject(entityName: "Item")
                    try item.setValue(.string(uid), forKey: "uid")
                    try item.setValue(.integer(Int64(value)), forKey: "value")
                }
                try context.save()
            }
        }

        override func tearDown() async throws {
            try await reads?.shutdown()
            reads = nil
            await sync?.stop()
            sync = nil
            stack = nil
            directory = nil
        }

        /// The application over serve's router, with `token` required when given.
        private func application(token: String?) throws -> some ApplicationProtocol {
            let options = try DirectoryOptions.parse(["--directory", directory.url.path])
            let reads = StoreReadPool(threads: 2)
            self.reads = reads
            let router = ServeRouter.make(
                stack: stack, sync: sync, reads: reads, streams: StreamSlots(maximum: 10),
                broadcast: ChangeBroadcast(sync: sync, stack: stack, reads: reads, logger: Logger(label: "test")), token: token, directory: options,
                socketPath: SharingConfiguration.defaultSocketPath(in: directory.url, environment: [:]))
            return Application(router: router)
        }

        private func json(_ body: ByteBuffer) throws -> Any {
            try JSONSerialization.jsonObject(with: Data(buffer: body))
        }

        func testObjectsAreReadAsJSONAndAnUnknownEntityIsNamedInA404() async throws {
            try await application(token: nil).test(.router) { client in
                try await client.execute(uri: "/v1/objects/Item?limit=10", method: .get) { response in
                    XCTAssertEqual(response.status, .ok)
                    XCTAssertEqual(response.headers[.contentType]?.hasPrefix("application/json"), true)
                    let text = String(buffer: response.body)
                    XCTAssertTrue(text.contains("\"a\"") && text.contains("\"b\""), text)
                }
                try await client.execute(uri: "/v1/objects/Nope", method: .get) { response in
                    XCTAssertEqual(response.status, .notFound)
                    XCTAssertTrue(String(buffer: response.body).contains("Item"), "the entities it has are named")
                }
                try await client.execute(uri: "/v1/objects/Item?limit=many", method: .get) { response in
                    XCTAssertEqual(response.status, .badRequest)
                }
            }
        }

        /// `Ambar-After: TOKEN`: another process's save, named by its token, is in the answer; a
        /// token no transaction has is a 504 after the bound, naming what the server holds; a
        /// header that is not a token is a 400.
        func testAmbarAfterAnswersOnceTheServerHoldsTheTransaction() async throws {
            let writer = try Peer("writer", directory: directory)
            defer { writer.kill() }
            let token = try XCTUnwrap(Int64(try writer.send("insert late 3").dropFirst("ok ".count)))
            XCTAssertGreaterThan(token, 0)
            let after = HTTPField.Name("Ambar-After")!
            try await application(token: nil).test(.router) { client in
                try await client.execute(uri: "/v1/objects/Item?predicate=uid%20==%20%22late%22", method: .get, headers: [after: "\(token)"]) { response in
                    XCTAssertEqual(response.status, .ok)
                    XCTAssertTrue(String(buffer: response.body).contains("\"late\""), String(buffer: response.body))
                }
                try await client.execute(uri: "/v1/status", method: .get, headers: [after: "\(token)"]) { response in
                    XCTAssertEqual(response.status, .ok)
                    let status = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    XCTAssertGreaterThanOrEqual((status["head_token"] as? NSNumber)?.int64Value ?? 0, token, "\(status)")
                }
                let started = ContinuousClock.now
                try await client.execute(uri: "/v1/objects/Item", method: .get, headers: [after: "\(token + 50)"]) { response in
                    XCTAssertEqual(response.status, .gatewayTimeout)
                    let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    XCTAssertEqual((body["token"] as? NSNumber)?.int64Value, token + 50)
                    XCTAssertEqual((body["held_through"] as? NSNumber)?.int64Value, token)
                    XCTAssertTrue((body["error"] as? String)?.contains("did not reach this server") == true, "\(body)")
                }
                XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, ReadAfterToken.bound, "it waited for the bound")
                for bad in ["soon", "0", "-3"] {
                    try await client.execute(uri: "/v1/status", method: .get, headers: [after: bad]) { response in
                        XCTAssertEqual(response.status, .badRequest, bad)
                    }
                }
            }
        }

        /// A stream asked to start past the ledger's head (a client that followed a store since
        /// put back to an earlier state by other means) is a 410 at once, naming the head, not a
        /// stream that waits for tokens that will name other transactions.
        func testAStartPastTheHeadIsGoneAtOnce() async throws {
            let head = try stack.writerCoordinator.currentHistoryToken()
            let lastEventID = HTTPField.Name("Last-Event-ID")!
            try await application(token: nil).test(.router) { client in
                try await client.execute(uri: "/v1/changes", method: .get, headers: [lastEventID: "\(head + 10)"]) { response in
                    XCTAssertEqual(response.status, .gone)
                    let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                    XCTAssertEqual((body["after"] as? NSNumber)?.int64Value, head + 10)
                    XCTAssertEqual((body["head_token"] as? NSNumber)?.int64Value, head)
                    XCTAssertTrue((body["error"] as? String)?.contains("past the ledger's head") == true, "\(body)")
                }
                try await client.execute(uri: "/v1/changes?after=\(head + 1)&entity=Item", method: .get) { response in
                    XCTAssertEqual(response.status, .gone, "filtered streams too")
                }
            }
        }

        /// However many ask at once, the status is made once, and then served from the cache
        /// until it is older than its maximum age or the ledger's head moves; a failure is not
        /// cached.
        func testTheStatusIsMadeOnceForEveryoneWhoAsksAtOnce() async throws {
            let made = Locked(0)
            let gate = AsyncStream<Void>.makeStream()
            let cache = SingleFlightCache(maximumAge: .seconds(3600)) {
                let count = made.withLock { count in
                    count += 1
                    return count
                }
                if count == 1 { for await _ in gate.stream { break } }  // the first waits until released
                return Data("report \(count)".utf8)
            }
            let reports = try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<20 { group.addTask { try await cache.value(for: 1) } }
                // Every caller is waiting once the first has started making it; then it is let go.
                while made.withLock({ $0 }) == 0 { await Task.yield() }
                gate.continuation.yield()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(Set(reports), [Data("report 1".utf8)], "twenty callers, one report")
            XCTAssertEqual(made.withLock { $0 }, 1, "made once for twenty")
            let again = try await cache.value(for: 1)
            XCTAssertEqual(again, Data("report 1".utf8), "served from the cache")
            let committed = try await cache.value(for: 2)
            XCTAssertEqual(committed, Data("report 2".utf8), "a commit makes it again")

            let failing = Locked(0)
            let stale = SingleFlightCache(maximumAge: .zero) {
                let count = failing.withLock { count in
                    count += 1
                    return count
                }
                if count == 1 { throw AmbarError.invalidPredicate("first") }
                return Data("report \(count)".utf8)
            }
            do {
                _ = try await stale.value(for: 1)
                XCTFail("the first report fails")
            } catch {
                XCTAssertEqual(error as? AmbarError, .invalidPredicate("first"))
            }
            let second = try await stale.value(for: 1)
            XCTAssertEqual(second, Data("report 2".utf8), "a failure is made again")
            let third = try await stale.value(for: 1)
            XCTAssertEqual(third, Data("report 3".utf8), "an answer older than the maximum age is made again")
        }

        /// Refusals are logged once per interval for each address, the next line counting those
        /// not logged; the addresses kept stay within the capacity, a scan from more included.
        func testRefusalsAreLoggedOncePerIntervalPerAddressWithinABoundedTable() {
            let log = RefusalLog(interval: .seconds(60), capacity: 2)
            let start = ContinuousClock.now
            XCTAssertEqual(log.shouldLog("10.0.0.1", now: start), 0)
            XCTAssertNil(log.shouldLog("10.0.0.1", now: start + .seconds(1)))
            XCTAssertNil(log.shouldLog("10.0.0.1", now: start + .seconds(59)))
            XCTAssertEqual(log.shouldLog("10.0.0.1", now: start + .seconds(61)), 2, "the two refusals not logged are counted")
            XCTAssertEqual(log.shouldLog("10.0.0.2", now: start + .seconds(62)), 0, "another address has its own line")
            for i in 3...50 { XCTAssertEqual(log.shouldLog("10.0.0.\(i)", now: start + .seconds(63)), 0) }
            XCTAssertEqual(log.count, 2, "a scan from 50 addresses keeps at most the capacity")
        }

        func testWithATokenEveryRouteButTheStatusPageWantsIt() async throws {
            try await application(token: "s3cret").test(.router) { client in
                try await client.execute(uri: "/v1/objects/Item", method: .get) { response in
                    XCTAssertEqual(response.status, .unauthorized)
                    XCTAssertEqual(response.headers[.wwwAuthenticate], "Bearer")
                    XCTAssertFalse(String(buffer: response.body).contains("\"a\""), "no data without the token")
                }
                try await client.execute(uri: "/v1/objects/Item", method: .get, headers: [.authorization: "Bearer wrong"]) { response in
                    XCTAssertEqual(response.status, .unauthorized)
                }
                try await client.execute(uri: "/v1/objects/Item", method: .get, headers: [.authorization: "Bearer s3cret"]) { response in
                    XCTAssertEqual(response.status, .ok)
                }
                try await client.execute(uri: "/", method: .get) { response in
                    XCTAssertEqual(response.status, .ok, "the status page holds no data and asks for the token itself")
                }
            }
        }
    }
#endif
