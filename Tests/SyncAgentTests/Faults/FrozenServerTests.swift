import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A PostgreSQL server that stops answering (every server process stopped with SIGSTOP, as a
/// hung host would): SIGTERM still ends `watch` and `run` within a few seconds, as it does with a
/// frozen hub, instead of waiting out a minute of statement timeout.
final class FrozenServerTests: AgentTestCase {
    /// A private server with a store of items in database `name`.
    private func serverWithStore(_ name: String) throws -> (server: PostgresTestServer, url: String) {
        let server: PostgresTestServer
        do {
            server = try PostgresTestServer.startPrivate()
        } catch let unavailable as PostgresTestServer.Unavailable where !PostgresTestServer.isRequired {
            throw XCTSkip("no PostgreSQL server: \(unavailable)")
        }
        let url = try server.url(database: name).absoluteString
        let modelFile = directory.url.appendingPathComponent("model.json")
        try JSONEncoder().encode(try itemModel()).write(to: modelFile)
        let created = try agent(["init", "--model", modelFile.path, "--directory", directory.url.path, "--store", url])
        XCTAssertEqual(created.status, 0, created.error)
        return (server, url)
    }

    /// Stops every process of the server (SIGSTOP to its process group); returns the group, for
    /// SIGCONT.
    private func freeze(_ server: PostgresTestServer) throws -> pid_t {
        let postmaster = try XCTUnwrap(
            Int32(try String(contentsOfFile: server.directory + "/data/postmaster.pid", encoding: .utf8).split(separator: "\n").first ?? ""))
        let group = getpgid(postmaster)
        XCTAssertGreaterThan(group, 1)
        XCTAssertEqual(kill(-group, SIGSTOP), 0)
        return group
    }

    func testSIGTERMEndsWatchAndRunPromptlyWhileTheDatabaseServerIsFrozen() throws {
        let (server, url) = try serverWithStore("frozen")

        let output = directory.url.appendingPathComponent("watch.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let watch = try startAgent(
            ["watch", "--json", "--directory", directory.url.path, "--store", url, "--consumer", "frozen", "--from", "oldest"],
            output: try FileHandle(forWritingTo: output))
        let run = try startAgent(["run", "--name", "frozen", "--entity", "Item", "--key", "uid", "--directory", directory.url.path, "--store", url])
        let items = directory.url.appendingPathComponent("items.ndjson")
        try #"{"uid":"a","value":1}"#.write(to: items, atomically: true, encoding: .utf8)
        XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--store", url, "--entity", "Item", "--key", "uid", items.path]).status, 0)
        XCTAssertTrue(eventually(timeout: 30) { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("Item") }, "watch follows the store")

        // Every process of the server stopped: statements and connection attempts get no answer.
        let group = try freeze(server)
        defer { kill(-group, SIGCONT) }
        // Long enough for both to be inside a statement, and for the doorbell's connection to
        // have failed its check (4 s) and be connecting again: a window, not a synchronisation.
        Thread.sleep(forTimeInterval: 7)
        XCTAssertTrue(watch.isRunning && run.isRunning)

        let stopping = Date()
        kill(watch.processIdentifier, SIGTERM)
        kill(run.processIdentifier, SIGTERM)
        XCTAssertTrue(eventually(timeout: 15) { !watch.isRunning && !run.isRunning }, "both ended after SIGTERM")
        let took = Date().timeIntervalSince(stopping)
        XCTAssertLessThan(took, 10, "SIGTERM ended them in \(took) s with the server frozen (the statement timeout is 60 s)")
        watch.waitUntilExit()
        run.waitUntilExit()
        XCTAssertEqual(watch.terminationReason, .exit, "watch exited, not killed by a signal")
        XCTAssertEqual(run.terminationReason, .exit, "run exited, not killed by a signal")
    }

    /// The server frozen before `run` starts: its store is still opening, inside a connection the
    /// server never answers, when SIGTERM comes. The shutdown deadline ends it with status 124 (a
    /// forced stop, said as such) instead of it dying by the signal or waiting for the server.
    func testSIGTERMEndsRunCleanlyWhileItIsStillOpeningTheStoreOnAFrozenServer() throws {
        let (server, url) = try serverWithStore("frozenstart")
        let group = try freeze(server)
        defer { kill(-group, SIGCONT) }
        let run = try startAgent(["run", "--name", "frozen", "--entity", "Item", "--key", "uid", "--directory", directory.url.path, "--store", url])
        // The kernel accepts the connection for the stopped server: once `run` holds one, it is
        // waiting for the server's answer inside opening the store.
        XCTAssertTrue(
            eventually(timeout: 30) { connections(of: run.processIdentifier, toPort: server.port) > 0 },
            "run connects to the server")
        XCTAssertTrue(run.isRunning)

        let stopping = Date()
        kill(run.processIdentifier, SIGTERM)
        XCTAssertTrue(eventually(timeout: 15) { !run.isRunning }, "run ended after SIGTERM")
        let took = Date().timeIntervalSince(stopping)
        XCTAssertLessThan(took, 10, "SIGTERM ended it in \(took) s with the server frozen")
        run.waitUntilExit()
        XCTAssertEqual(run.terminationReason, .exit, "run exited, not killed by the signal")
        XCTAssertEqual(run.terminationStatus, 124, "the shutdown deadline ended it: a forced stop is not a clean exit")
    }
}

/// TCP connections the process `pid` holds to a local `port`, as `ss -tnp` lists them.
private func connections(of pid: Int32, toPort port: Int) -> Int {
    guard let result = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/ss"), ["-tnpH", "dport", "=", ":\(port)"], timeout: 10) else {
        return 0
    }
    return result.output.split(separator: "\n").filter { $0.contains("pid=\(pid),") }.count
}
