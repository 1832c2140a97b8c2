import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Store safety when space runs out or the file system turns read-only, in a real
/// second process (`ambar-test-helper diskfull|readonly`). The full-disk and read-only cases run
/// on a small tmpfs mounted in a private mount namespace (`unshare -m`), which the rest of the
/// machine never sees; the file-size-limit case (RLIMIT_FSIZE) needs no privileges and runs
/// everywhere.
final class DiskFullTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory = nil }

    /// Runs the helper, inside a private mount namespace with a 4 MB tmpfs on the directory when
    /// `tmpfs` is set; returns its stdout lines.
    func runHelper(_ arguments: [String], tmpfs: Bool) throws -> [String] {
        let helper = BuiltProducts.url("ambar-test-helper")
        let result: (status: Int32, output: String, error: String)
        if tmpfs {
            // sh -c <script> sh <directory> <helper> <arguments…>: mount, then exec the rest.
            let script = #"mount -t tmpfs -o size=4m ambar-test "$1" && shift && exec "$@""#
            let shellArguments = ["-c", script, "sh", directory.url.path, helper.path] + arguments
            result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/unshare"), ["-m", "--propagation", "private", "/bin/sh"] + shellArguments, timeout: 120)
        } else {
            result = try ProcessRunner.run(helper, arguments, timeout: 120)
        }
        XCTAssertEqual(result.status, 0, "helper failed: \(result.error)")
        return result.output.split(separator: "\n").map(String.init)
    }

    /// Whether this machine lets us mount a tmpfs in a private mount namespace.
    func requireMountNamespace() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
            throw XCTSkip("no /usr/bin/unshare: the full-disk case is covered by testASaveOverTheFileSizeLimit…")
        }
        let probe = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["-m", "--propagation", "private", "/bin/sh", "-c", #"mount -t tmpfs -o size=64k ambar-probe "$1""#, "sh", directory.url.path], timeout: 20)
        guard probe.status == 0 else {
            throw XCTSkip(
                "cannot mount a tmpfs in a private mount namespace here (\(probe.error.trimmingCharacters(in: .whitespacesAndNewlines))); the file-size-limit test covers the same save path"
            )
        }
    }

    /// The save that does not fit throws `storeFull`, the context keeps all 3,000 objects, the
    /// store still holds exactly the 100 committed before and passes its integrity check, another
    /// reader opens and reads it meanwhile, and saving the same context after space returns
    /// commits everything.
    func assertNothingLost(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard lines.count == 7 else { return XCTFail("unexpected helper output: \(lines)", file: file, line: line) }
        XCTAssertTrue(lines[0].hasPrefix("error storeFull: "), lines[0], file: file, line: line)
        XCTAssertTrue(lines[0].contains("Free some space and save again"), lines[0], file: file, line: line)
        XCTAssertEqual(Array(lines[1...]), ["kept 3000", "readable 100", "integrity ok", "saved", "count 3100", "integrity ok"], file: file, line: line)
    }

    func testASaveOnAFullFileSystemThrowsAndLosesNothing() throws {
        try requireMountNamespace()
        assertNothingLost(try runHelper(["diskfull", directory.url.path, "tmpfs"], tmpfs: true))
    }

    func testASaveOverTheFileSizeLimitThrowsAndLosesNothing() throws {
        assertNothingLost(try runHelper(["diskfull", directory.url.path, "fsize"], tmpfs: false))
    }

    /// While one process's save fails for want of space, another process sharing the store keeps
    /// reading it: no error, and only whole transactions (100 items, then 3,100 after the retry).
    func testAnotherProcessKeepsReadingWhileASaveRunsOutOfSpace() throws {
        let shared = try TemporaryDirectory()
        let store = shared.url.appendingPathComponent("full.sqlite")
        _ = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        let reader = try Peer("reader", directory: shared, store: store)
        defer { reader.kill() }
        try reader.post("readloop 6")
        let lines = try runHelper(["diskfull", shared.url.path, "fsize"], tmpfs: false)
        assertNothingLost(lines)
        let report = try reader.receive(timeout: 30)
        let fields = Dictionary(
            uniqueKeysWithValues: report.split(separator: " ").dropFirst().compactMap { field -> (String, String)? in
                let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
                return parts.count == 2 ? (parts[0], parts[1]) : nil
            })
        XCTAssertGreaterThan(Int(fields["reads"] ?? "") ?? 0, 100, report)
        XCTAssertEqual(fields["errors"], "0", report)
        let counts = Set((fields["counts"] ?? "").split(separator: ",").map(String.init))
        XCTAssertTrue(counts.isSubset(of: ["0", "100", "3100"]), "only whole transactions were ever visible: \(report)")
        XCTAssertTrue(counts.contains("100"), "the reader read while the store held the first 100: \(report)")
    }

    func testAStoreOnAReadOnlyFileSystemSaysSoAndIsIntactOnceWritable() throws {
        try requireMountNamespace()
        let lines = try runHelper(["readonly", directory.url.path], tmpfs: true)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("error storeReadOnly: ") == true, "\(lines)")
        XCTAssertTrue(lines.first?.contains("file system is mounted read-only") == true, "\(lines)")
        XCTAssertEqual(lines.last, "count 10")
    }
}
