import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent import`: NDJSON upserted by key, in batches, with errors that name line and field.
final class ImportCommandTests: AgentTestCase {
    func write(_ lines: [String]) throws -> String {
        let file = directory.url.appendingPathComponent("input-\(UUID().uuidString.prefix(6)).ndjson")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    func importing(_ file: String, _ extra: [String] = []) throws -> (status: Int32, output: String, error: String) {
        try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid"] + extra + [file])
    }

    /// The `uid → value` pairs in the store, read through a separate stack.
    func storedItems() throws -> [String: Int64] {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: store, name: "check")
        let context = try stack.temporaryContext()
        return try context.performAndWait {
            var items: [String: Int64] = [:]
            for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                if case .string(let uid) = try object.value(forKey: "uid"), case .integer(let value) = try object.value(forKey: "value") {
                    items[uid] = value
                }
            }
            return items
        }
    }

    func testUpsertsByKeyAndReportsCounts() throws {
        try initStore()
        let first = try importing(try write([#"{"uid":"a","value":1}"#, #"{"uid":"b","value":2}"#, #"{"uid":"c"}"#]), ["--json"])
        XCTAssertEqual(first.status, 0, first.error)
        let report = try json(first.output)
        XCTAssertEqual(report["inserted"] as? Int, 3)
        XCTAssertEqual(report["tokens"] as? [Int], [1])
        let second = try importing(try write([#"{"uid":"a","value":10}"#, #"{"uid":"b","value":2}"#, #"{"uid":"d","value":4}"#]), ["--json"])
        let again = try json(second.output)
        XCTAssertEqual(again["inserted"] as? Int, 1)
        XCTAssertEqual(again["updated"] as? Int, 1, "b did not change, so it is not counted as updated")
        XCTAssertEqual(try storedItems(), ["a": 10, "b": 2, "c": 0, "d": 4])
    }

    func testInsertsResolvedByAUniquenessConstraintCountAsUpdates() throws {
        try initStore()
        let file = try write([#"{"uid":"a","value":1}"#, #"{"uid":"b","value":2}"#])
        let withoutKey = { try self.agent(["import", "--directory", self.directory.url.path, "--entity", "Item", "--json", file]) }
        XCTAssertEqual(try json(try withoutKey().output)["inserted"] as? Int, 2)
        let again = try json(try withoutKey().output)
        XCTAssertEqual(again["inserted"] as? Int, 0, "uid is unique: the importer's policy merged them into the existing rows")
        XCTAssertEqual(again["updated"] as? Int, 2)
        XCTAssertEqual(try storedItems(), ["a": 1, "b": 2])
    }

    func testABadLineThreeAbortsItsBatchAndKeepsEarlierBatches() throws {
        try initStore()
        let lines = [#"{"uid":"a","value":1}"#, #"{"uid":"b","value":2}"#, #"{"uid":"c","value":"three"}"#, #"{"uid":"d","value":4}"#]
        // Batches of 2: lines 1–2 commit, the batch holding line 3 does not.
        let result = try importing(try write(lines), ["--batch-size", "2"])
        XCTAssertEqual(result.status, 65, "the exit code says the import was aborted")
        XCTAssertTrue(result.error.contains("line 3"), result.error)
        XCTAssertTrue(result.error.contains("\"value\""), "the field is named: \(result.error)")
        XCTAssertEqual(try storedItems(), ["a": 1, "b": 2])

        // One batch for everything: nothing at all is written.
        try FileManager.default.removeItem(at: store)
        try? FileManager.default.removeItem(atPath: store.path + "-wal")
        try? FileManager.default.removeItem(atPath: store.path + "-shm")
        try initStore()
        let whole = try importing(try write(lines))
        XCTAssertEqual(whole.status, 65)
        XCTAssertTrue(whole.error.contains("line 3: field \"value\": expected an integer"), whole.error)
        XCTAssertEqual(try storedItems(), [:], "nothing of the failing batch is written")
    }

    func testSkipReportsBadLinesAndImportsTheRest() throws {
        try initStore()
        let file = try write([
            #"{"uid":"a","value":1}"#, "not json", #"{"uid":"b","colour":"red"}"#, #"{"value":3}"#, #"{"uid":"e","value":5}"#,
        ])
        let result = try importing(file, ["--on-error", "skip", "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        let report = try json(result.output)
        let errors = try XCTUnwrap(report["errors"] as? [[String: Any]])
        XCTAssertEqual(errors.compactMap { $0["line"] as? Int }, [2, 3, 4])
        XCTAssertEqual(errors[1]["field"] as? String, "colour")
        XCTAssertEqual(errors[2]["field"] as? String, "uid", "a missing key names the key")
        XCTAssertEqual(try storedItems(), ["a": 1, "e": 5])
    }

    func testUnknownEntityOrKeyIsAClearErrorBeforeAnythingIsRead() throws {
        try initStore()
        let file = try write([#"{"uid":"a"}"#])
        let entity = try agent(["import", "--directory", directory.url.path, "--entity", "Nope", file])
        XCTAssertNotEqual(entity.status, 0)
        XCTAssertTrue(entity.error.contains("no entity \"Nope\""), entity.error)
        let key = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "sku", file])
        XCTAssertTrue(key.error.contains("no attribute \"sku\""), key.error)
        XCTAssertEqual(try storedItems(), [:])
    }

    func testWatchShowsExactlyTheTokensImportCommitted() throws {
        try initStore()
        let output = Pipe()
        let watch = try startAgent(["watch", "--directory", directory.url.path, "--json"], output: output)
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) })
        let lines = (0..<7).map { #"{"uid":"k\#($0)","value":\#($0)}"# }
        let result = try importing(try write(lines), ["--batch-size", "3", "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        let committed = try XCTUnwrap(try json(result.output)["tokens"] as? [Int])
        XCTAssertEqual(committed.count, 3, "7 lines in batches of 3")
        var reader = LineReader(output.fileHandleForReading)
        var seen: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(20)
        while seen.count < committed.count, let line = reader.next(until: deadline) { seen.append(try json(Substring(line))) }
        XCTAssertEqual(seen.compactMap { $0["token"] as? Int }, committed)
        XCTAssertEqual(seen.map { ($0["inserted"] as? [String])?.count ?? -1 }, [3, 3, 1])
        XCTAssertEqual(seen.first?["author"] as? String, "sync-agent import")
        kill(watch.processIdentifier, SIGTERM)
        watch.waitUntilExit()
        XCTAssertEqual(watch.terminationStatus, 0)
    }
}
