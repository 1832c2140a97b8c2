import AmbarTestSupport
import Foundation
import XCTest

/// The unit files in systemd/: `systemd-analyze verify` prints nothing, and the services stay under
/// the exposure threshold of scripts/check-units (1.0).
final class UnitFileTests: XCTestCase {
    var repository: URL {
        Repository.root
    }

    func checkUnits(in directory: URL? = nil) throws -> (status: Int32, output: String, error: String) {
        var arguments = [repository.appendingPathComponent("scripts/check-units").path, BuiltProducts.url("sync-agent").path]
        if let directory { arguments.insert("AMBAR_UNITS_DIR=\(directory.path)", at: 0) }
        return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments, timeout: 120)
    }

    func testUnitsVerifyWithoutWarningsAndStayUnderTheExposureThreshold() throws {
        let result = try checkUnits()
        XCTAssertEqual(result.status, 0, result.output + result.error)
        XCTAssertTrue(result.output.contains("no warnings"), result.output)
        XCTAssertTrue(result.output.contains("ambar-hub.service: 0."), "hub exposure: \(result.output)")
    }

    func testTheCheckFailsOnAUnitSystemd252WouldIgnore() throws {
        let broken = try TemporaryDirectory()
        for name in try FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("systemd").path) where name.hasPrefix("ambar") {
            var text = try String(contentsOf: repository.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            if name == "ambar-hub.service" { text = text.replacingOccurrences(of: "Type=notify\n", with: "Type=notify-reload\n") }
            try text.write(to: broken.url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let result = try checkUnits(in: broken.url)
        XCTAssertNotEqual(result.status, 0, "Type=notify-reload does not exist in systemd 252: \(result.output)")
        XCTAssertTrue(result.error.contains("notify-reload"), result.error)
    }
}
