import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent restore` of a store on PostgreSQL, through the built binary, from the archive
/// `sync-agent backup` wrote, while a durable consumer and a sharing process keep running on it:
/// the rows go back to the archive's, the ledger goes on past the old head (no token names two
/// transactions), both processes reconcile and follow what comes after.
final class PostgresRestoreTests: AgentTestCase {
    var server: PostgresTestServer!
    var storeURL: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        switch Result(catching: { () throws(PostgresTestServer.Unavailable) in try PostgresTestServer.shared() }) {
        case .success(let shared): server = shared
        case .failure(let unavailable) where !PostgresTestServer.isRequired: throw XCTSkip("no PostgreSQL server on this machine: \(unavailable)")
        case .failure(let unavailable): throw unavailable
        }
        storeURL = try server.url(database: "restore_\(UUID().uuidString.prefix(8))").absoluteString
    }

    private var on: [String] { ["--directory", directory.url.path, "--store", storeURL] }

    private func importProducts(_ skus: [String]) throws -> Int64 {
        let file = directory.url.appendingPathComponent("products-\(UUID().uuidString.prefix(6)).ndjson")
        try Data(skus.map { #"{"sku":"\#($0)","title":"\#($0)"}"# + "\n" }.joined().utf8).write(to: file)
        let imported = try agent(["import"] + on + ["--entity", "Product", "--key", "sku", "--json", file.path])
        XCTAssertEqual(imported.status, 0, imported.error)
        let tokens = try XCTUnwrap(try json(imported.output)["tokens"] as? [Int], imported.output)
        return Int64(try XCTUnwrap(tokens.last, "the import changed something: \(imported.output)"))
    }

    private func skus() throws -> [String] {
        let fetched = try agent(["fetch"] + on + ["--entity", "Product", "--sort", "sku", "--json"])
        XCTAssertEqual(fetched.status, 0, fetched.error)
        return try fetched.output.split(separator: "\n").compactMap { try json($0)["sku"] as? String }
    }

    /// The largest primary key among the products (the number that ends each object ID).
    private func largestPrimaryKey() throws -> Int {
        let fetched = try agent(["fetch"] + on + ["--entity", "Product", "--json"])
        XCTAssertEqual(fetched.status, 0, fetched.error)
        return try fetched.output.split(separator: "\n").compactMap { line in
            (try json(line)["id"] as? String)?.split(separator: "/").last.flatMap { Int($0.dropFirst()) }
        }.max() ?? 0
    }

    private func lines(_ file: URL) -> [[String: Any]] {
        // try?: a file still being written is read again at the next look
        ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { try? json($0) }
    }

    private func token(_ line: [String: Any]) -> Int64? {
        (line["token"] as? Int64) ?? (line["token"] as? Int).map(Int64.init)
    }

    func testRestoreUnderARunningConsumerAndASharingProcessContinuesPastTheOldHead() throws {
        let created = try agent(["init"] + on + ["--model", Repository.url("examples/products.model.json").path])
        XCTAssertEqual(created.status, 0, created.error)
        let early = try importProducts(["A1", "A2"])
        let archive = directory.url.appendingPathComponent("early.dump")
        let backedUp = try agent(["backup"] + on + ["--to", archive.path])
        XCTAssertEqual(backedUp.status, 0, backedUp.error)

        let consumed = directory.url.appendingPathComponent("consumer.ndjson")
        _ = FileManager.default.createFile(atPath: consumed.path, contents: nil)
        let consumer = try startAgent(
            ["watch"] + on + ["--consumer", "printer", "--from", "oldest", "--json"], output: try FileHandle(forWritingTo: consumed))
        let merged = directory.url.appendingPathComponent("sharing.ndjson")
        _ = FileManager.default.createFile(atPath: merged.path, contents: nil)
        let sharing = try startAgent(["watch"] + on + ["--json"], output: try FileHandle(forWritingTo: merged))
        // The sharing process follows once it prints a merge; the consumer once it printed the first import.
        var oldHead = early
        XCTAssertTrue(
            try eventually(timeout: 30) {
                oldHead = try self.importProducts(["P-\(UUID().uuidString.prefix(6))"])
                return self.lines(merged).contains { self.token($0) != nil }
            }, "the sharing process follows the ledger")
        oldHead = try importProducts(["B1", "B2", "B3"])
        XCTAssertTrue(eventually(timeout: 30) { self.lines(consumed).contains { self.token($0) == oldHead } }, "the consumer printed every import")
        let printedBefore = lines(consumed).count
        let largestKey = try largestPrimaryKey()

        let restored = try agent(["restore"] + on + ["--from", archive.path, "--json"])
        XCTAssertEqual(restored.status, 0, restored.error)
        let report = try json(restored.output)
        XCTAssertEqual(report["backup_head"] as? Int, Int(early))
        XCTAssertEqual(report["replaced_head"] as? Int, Int(oldHead))
        let marker = try XCTUnwrap(report["marker_token"] as? Int)
        XCTAssertGreaterThan(marker, Int(oldHead) + 1, "the restored ledger continues past the old head")
        XCTAssertFalse(restored.output.contains("kept_aside"), "nothing is kept aside on a server: \(restored.output)")
        XCTAssertEqual(try skus(), ["A1", "A2"], "the rows are the archive's")

        // Both processes go on, each told that its history expired.
        XCTAssertTrue(
            eventually(timeout: 30) { self.lines(consumed).contains { $0["history_expired"] as? Bool == true } },
            "the consumer reconciles: \(lines(consumed).suffix(3))")
        XCTAssertTrue(
            eventually(timeout: 30) { self.lines(merged).contains { $0["history_expired"] as? Bool == true } },
            "the sharing process reads every object again: \(lines(merged).suffix(3))")
        XCTAssertTrue(consumer.isRunning && sharing.isRunning, "neither process stops")

        // A write after the restore: a new token past the marker, new primary keys, seen by both.
        let after = try importProducts(["C1"])
        XCTAssertGreaterThan(after, Int64(marker))
        XCTAssertEqual(try skus(), ["A1", "A2", "C1"])
        XCTAssertGreaterThan(try largestPrimaryKey(), largestKey, "primary keys never go back: no key is handed out twice")
        XCTAssertTrue(eventually(timeout: 30) { self.lines(consumed).contains { self.token($0) == after } }, "the consumer prints the new transaction")
        XCTAssertTrue(eventually(timeout: 30) { self.lines(merged).contains { self.token($0) == after } }, "the sharing process merges it")
        let printedAfter = lines(consumed).dropFirst(printedBefore)
        XCTAssertFalse(
            printedAfter.contains { line in (self.token(line) ?? 0) <= oldHead && line["history_expired"] as? Bool != true },
            "no token at or before the old head is printed again as a transaction: \(Array(printedAfter))")
    }

    func testRestoreRefusesAnotherStoresArchiveAndAFileThatIsNoArchiveChangingNothing() throws {
        let created = try agent(["init"] + on + ["--model", Repository.url("examples/products.model.json").path])
        XCTAssertEqual(created.status, 0, created.error)
        _ = try importProducts(["A1"])

        let otherURL = try server.url(database: "other_\(UUID().uuidString.prefix(8))").absoluteString
        let other = ["--directory", directory.url.path, "--store", otherURL]
        XCTAssertEqual(try agent(["init"] + other + ["--model", Repository.url("examples/products.model.json").path]).status, 0)
        let archive = directory.url.appendingPathComponent("other.dump")
        let backedUp = try agent(["backup"] + other + ["--to", archive.path])
        XCTAssertEqual(backedUp.status, 0, backedUp.error)

        let refused = try agent(["restore"] + on + ["--from", archive.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.error.contains("is another store"), refused.error)
        XCTAssertTrue(refused.error.contains("nothing was changed"), refused.error)
        XCTAssertEqual(try skus(), ["A1"])

        let notArchive = directory.url.appendingPathComponent("notes.txt")
        try Data("not a dump\n".utf8).write(to: notArchive)
        let unreadable = try agent(["restore"] + on + ["--from", notArchive.path])
        XCTAssertNotEqual(unreadable.status, 0)
        XCTAssertTrue(unreadable.error.contains("not an archive sync-agent backup wrote"), unreadable.error)
        XCTAssertEqual(try skus(), ["A1"])

        // Allowed explicitly, the other store's (empty) archive takes this one's place.
        let allowed = try agent(["restore"] + on + ["--from", archive.path, "--allow-another-store", "--json"])
        XCTAssertEqual(allowed.status, 0, allowed.error)
        XCTAssertEqual(try skus(), [])
    }
}
