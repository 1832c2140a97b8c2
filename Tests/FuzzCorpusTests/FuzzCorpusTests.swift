import AmbarStack
import AmbarTestSupport
import Foundation
import FuzzChecks
import RecordImport
import SharedStoreIPC
import XCTest

/// Replays the fuzzers' seed corpus and every input a fuzzer ever found (`Fuzz/Regressions`)
/// through the same checks the fuzzers run, so a fixed finding stays fixed.
final class FuzzCorpusTests: XCTestCase {
    private static let fuzzDirectory = Repository.url("Fuzz")

    private func inputs(_ kind: String) throws -> [(name: String, bytes: [UInt8])] {
        var result: [(String, [UInt8])] = []
        for folder in ["Corpus", "Regressions"] {
            let directory = Self.fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(kind)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where !name.hasPrefix(".") {
                result.append(("\(folder)/\(kind)/\(name)", Array(try Data(contentsOf: directory.appendingPathComponent(name)))))
            }
        }
        return result
    }

    func testEveryWireInputPassesTheFuzzersChecks() throws {
        let all = try inputs("wire")
        XCTAssertGreaterThanOrEqual(all.count, 10, "the seed corpus is in Fuzz/Corpus/wire")
        for input in all {
            XCTAssertNil(WireChecks.check(input.bytes), input.name)
        }
    }

    func testEveryWireSeedIsAValidFrameStream() throws {
        for input in try inputs("wire") where input.name.hasPrefix("Corpus/") {
            var decoder = FrameDecoder()
            decoder.append(input.bytes)
            var count = 0
            XCTAssertNoThrow(try { while try decoder.next() != nil { count += 1 } }(), input.name)
            XCTAssertGreaterThan(count, 0, "\(input.name) holds no whole frame: seeds should be valid")
            XCTAssertEqual(decoder.pendingByteCount, 0, "\(input.name) has trailing bytes")
        }
    }

    func testTheHandshakeAdmitsOnlyAHelloForItsStoreInItsVersion() throws {
        let verdicts = try inputs("wire").filter { $0.name.contains("hello") }.map { input -> (String, Handshake.Verdict?) in
            var decoder = FrameDecoder()
            decoder.append(input.bytes)
            return (input.name, (try? decoder.next())?.map { Handshake.verdict(on: $0, storeUUID: WireChecks.storeUUID) })
        }
        let byName = Dictionary(uniqueKeysWithValues: verdicts.map { ($0.0, $0.1) })
        guard case .admit(let hello)?? = byName["Corpus/wire/hello.bin"] else { return XCTFail("hello.bin is not admitted: \(verdicts)") }
        XCTAssertEqual(hello.processName, "viewer")
        guard case .refuse(.wrongStore, _)?? = byName["Corpus/wire/hello-other-store.bin"] else { return XCTFail("\(verdicts)") }
        guard case .refuse(.unsupportedVersion, _)?? = byName["Corpus/wire/hello-version-9.bin"] else { return XCTFail("\(verdicts)") }
        guard case .refuse(.malformed, _) = Handshake.verdict(on: .ping(1), storeUUID: WireChecks.storeUUID) else { return XCTFail("ping admitted") }
    }

    func testEveryPredicateFormatPassesTheFuzzersChecks() throws {
        let all = try inputs("predicate-format")
        XCTAssertGreaterThanOrEqual(all.count, 10, "the seed corpus is in Fuzz/Corpus/predicate-format")
        for input in all {
            XCTAssertNil(PredicateFormatChecks.check(input.bytes), input.name)
        }
        // The seeds cover both outcomes: most parse, SUBQUERY does not.
        let parsed = all.filter { (try? PredicateTemplate(format: String(decoding: $0.bytes, as: UTF8.self), argumentArray: [])) != nil }.count
        XCTAssertGreaterThan(parsed, 5)
        XCTAssertLessThan(parsed, all.count)
    }

    func testEveryImportLinePassesTheFuzzersChecks() throws {
        let decoder = try ImportLineChecks.makeDecoder()
        let all = try inputs("import-line")
        XCTAssertGreaterThanOrEqual(all.count, 10, "the seed corpus is in Fuzz/Corpus/import-line")
        for input in all {
            XCTAssertNil(ImportLineChecks.check(input.bytes, decoder: decoder), input.name)
        }
        // The seeds cover both outcomes.
        let decoded = all.filter { (try? decoder.decode(Data($0.bytes), line: 1)) != nil }.count
        XCTAssertGreaterThan(decoded, 3)
        XCTAssertGreaterThan(all.count - decoded, 3)
    }

    /// A line is judged by its shape: not an object, not JSON, or a field holding an array or
    /// object (however deeply nested: the fuzzer found lines 450 levels deep that were decoded level
    /// by level, each level's failed attempts building a coding path as long as the depth).
    func testLinesThatAreNotFlatObjectsGetClearErrors() throws {
        let decoder = try ImportLineChecks.makeDecoder()
        func error(_ line: String) -> ImportLineError? {
            do {
                _ = try decoder.decode(Data(line.utf8), line: 3)
                return nil
            } catch {
                return error
            }
        }
        for notAnObject in ["[1,2]", #""uid""#, "17", "null", "[[[]]]"] {
            XCTAssertEqual(error(notAnObject)?.reason, "expected a JSON object, one per line", notAnObject)
            XCTAssertNil(error(notAnObject)?.field, notAnObject)
        }
        XCTAssertEqual(error(#"{"uid":"#)?.reason.hasPrefix("not valid JSON"), true)
        let deep = #"{"uid":"a","note":"# + String(repeating: "[", count: 450) + String(repeating: "]", count: 450) + "}"
        XCTAssertEqual(error(deep)?.field, "note")
        XCTAssertEqual(error(deep)?.reason, "expected a string, got an array")
        XCTAssertEqual(error(#"{"uid":"a","note":{"x":[1]}}"#)?.reason, "expected a string, got an object")
        XCTAssertEqual(error(#"{"uid":"a","small":[7]}"#)?.reason, "expected an integer, got an array")
        XCTAssertNil(error(#"{"uid":"a","note":"fine","small":7}"#))
    }

    /// The checks can fail: a property that does not hold is reported.
    func testTheImportCheckReportsABrokenProperty() throws {
        let line = Array(#"{"uid":"x"}"#.utf8)
        XCTAssertNil(ImportLineChecks.check(line, decoder: try ImportLineChecks.makeDecoder()))
        // Without an upsert key, records have none: the check (which expects one) says so.
        XCTAssertEqual(
            ImportLineChecks.check(line, decoder: try ImportLineChecks.makeDecoder(keyAttribute: nil)),
            "a record without a string key")
    }
}
