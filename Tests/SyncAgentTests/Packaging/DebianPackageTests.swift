import AmbarTestSupport
import Foundation
import XCTest

/// The Debian package: `scripts/build-deb` packages the built `sync-agent`, lintian reports no
/// error, and `dpkg --root` installs it into an empty root — its maintainer scripts run there
/// (`--force-script-chrootless`: sysusers and tmpfiles act on that root) — where the files, the
/// user and group and the shared directory are checked, `systemd-analyze verify --root` finds
/// nothing to say about the installed units, and removing and purging leave the store directory.
///
/// The tests package the debug build they already have (an optimized build takes longer than CI
/// allows): its RUNPATH into the toolchain is the one lintian error they let through, since it is
/// the binary's build, not the package; `scripts/build-deb` without `--binary` makes the release
/// package, with the Swift runtime linked in statically, and fails on any lintian error.
final class DebianPackageTests: XCTestCase {
    /// The package, built once for the class (around the debug build, gzip-compressed: quicker).
    nonisolated(unsafe) private static var built: (directory: TemporaryDirectory, deb: URL)?
    private var work: TemporaryDirectory!
    private var root: URL { work.url.appendingPathComponent("root") }

    override func setUpWithError() throws {
        // Packaging runs no thread of ours: the ThreadSanitizer pass has nothing to find here.
        try XCTSkipIf(TestScale.isReduced, "packaging is checked in the plain pass; under ThreadSanitizer (AMBAR_TSAN) it would only repeat it")
        work = try TemporaryDirectory()
    }

    override func tearDown() { work = nil }

    override class func tearDown() { built = nil }

    private func run(_ tool: String, _ arguments: [String], timeout: TimeInterval = 300, environment: [String: String]? = nil) throws -> (
        status: Int32, output: String, error: String
    ) {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments, timeout: timeout, environment: environment)
    }

    private func dpkg(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        // Maintainer scripts run outside a chroot with DPKG_ROOT set; the root holds no libc or
        // systemd packages, so dependencies are not checked; dpkg's log stays out of the host.
        try run("dpkg", ["--root=\(root.path)", "--force-script-chrootless", "--force-depends", "--log=/dev/null"] + arguments)
    }

    private func file(_ path: String) -> URL { root.appendingPathComponent(path) }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: file(path).path) }

    /// The `name` entry of the root's /etc/passwd or /etc/group, split on `:`.
    private func entry(_ name: String, in database: String) throws -> [String]? {
        let lines = try String(contentsOf: file("etc/\(database)"), encoding: .utf8).split(separator: "\n")
        return lines.map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) }.first { $0.first == name }
    }

    /// The package built around the debug build (once per class); its path.
    private func buildPackage() throws -> URL {
        if let built = Self.built { return built.deb }
        let directory = try TemporaryDirectory()
        let result = try run(
            Repository.url("scripts/build-deb").path,
            ["--binary", BuiltProducts.url("sync-agent").path, "--output", directory.url.path, "--no-lintian", "--compression", "gzip"])
        XCTAssertEqual(result.status, 0, result.error)
        let deb = URL(fileURLWithPath: try XCTUnwrap(result.output.split(separator: "\n").last.map(String.init), result.error))
        let version = try run(BuiltProducts.url("sync-agent").path, ["--version"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(deb.lastPathComponent, "ambar-sync-agent_\(version)_amd64.deb")
        Self.built = (directory, deb)
        return deb
    }

    func testLintianReportsNoErrorOfThePackage() throws {
        let deb = try buildPackage()
        // lintian leaves a file of its own in TMPDIR (mldbm-elf-*): a folder removed after.
        let scratch = try TemporaryDirectory()
        let lint = try run(
            "lintian", ["--no-tag-display-limit", deb.path],
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": scratch.url.path]) { $1 })
        let errors = (lint.output + lint.error).split(separator: "\n").filter { $0.hasPrefix("E: ") }
        let ofThePackage = errors.filter { !($0.contains("custom-library-search-path") && $0.contains("/opt/swift")) }
        XCTAssertEqual(ofThePackage, [], "lintian: \(lint.output)\(lint.error)")
        // It ran and read the package: 0 without an error tag, 2 with one (the debug build's RUNPATH).
        XCTAssertEqual(lint.status, errors.isEmpty ? 0 : 2, "lintian: \(lint.output)\(lint.error)")
    }

    func testItInstallsIntoAnEmptyRootWithItsUserDirectoryAndUnitsThatVerify() throws {
        let deb = try buildPackage()
        for folder in ["var/lib/dpkg/info", "var/lib/dpkg/updates"] {
            try FileManager.default.createDirectory(at: file(folder), withIntermediateDirectories: true)
        }
        try Data().write(to: file("var/lib/dpkg/status"))

        let installed = try dpkg(["-i", deb.path])
        XCTAssertEqual(installed.status, 0, installed.output + installed.error)
        XCTAssertTrue(try dpkg(["-s", "ambar-sync-agent"]).output.contains("Status: install ok installed"))

        // The files.
        let binary = file("usr/bin/sync-agent")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: binary.path))
        XCTAssertEqual(try run(binary.path, ["--version"]).output, try run(BuiltProducts.url("sync-agent").path, ["--version"]).output)
        let units = ["ambar-hub.socket", "ambar-hub.service", "ambar-agent@.service", "ambar-agents.target", "ambar-serve.socket", "ambar-serve.service"]
        for unit in units { XCTAssertTrue(exists("lib/systemd/system/\(unit)"), unit) }
        for path in [
            "usr/lib/sysusers.d/ambar-sync-agent.conf", "usr/lib/tmpfiles.d/ambar-sync-agent.conf", "etc/ambar/hub.conf",
            "etc/ambar/agent-products.env", "etc/ambar/agent-products.conf", "usr/share/doc/ambar-sync-agent/copyright",
            "usr/share/doc/ambar-sync-agent/changelog.gz", "usr/share/doc/ambar-sync-agent/examples/products.model.json",
            "usr/share/man/man1/sync-agent.1.gz",
        ] {
            XCTAssertTrue(exists(path), path)
        }
        // Every unit's Documentation= is a file the package installs.
        for unit in units {
            let text = try String(contentsOf: file("lib/systemd/system/\(unit)"), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("Documentation=file:") {
                XCTAssertTrue(exists(String(line.dropFirst("Documentation=file:/".count))), "\(unit): \(line)")
            }
        }
        let conffiles = try String(contentsOf: file("var/lib/dpkg/info/ambar-sync-agent.conffiles"), encoding: .utf8)
        XCTAssertEqual(Set(conffiles.split(separator: "\n")), ["/etc/ambar/hub.conf", "/etc/ambar/agent-products.env", "/etc/ambar/agent-products.conf"])

        // The maintainer script made the group, the user (in it) and the shared directory.
        let group = try XCTUnwrap(try entry("ambar", in: "group"), "postinst creates the group ambar")
        let user = try XCTUnwrap(try entry("ambar-agent", in: "passwd"), "postinst creates the user ambar-agent")
        XCTAssertEqual(user[3], group[2], "ambar-agent's primary group is ambar")
        XCTAssertEqual(user[5], "/var/lib/ambar")
        var info = stat()
        XCTAssertEqual(stat(file("var/lib/ambar").path, &info), 0, "postinst creates /var/lib/ambar")
        XCTAssertEqual(info.st_mode & 0o7777, 0o2770, "setgid, group-writable, closed to others")
        XCTAssertEqual(info.st_uid, 0)
        XCTAssertEqual(String(info.st_gid), group[2], "owned by the group ambar")

        // systemd-analyze verify in the root, with systemd's own units beside (as Debian's systemd
        // package installs them) and /bin merged into /usr/bin.
        let systemUnits = FileManager.default.fileExists(atPath: "/usr/lib/systemd/system/sockets.target") ? "/usr/lib/systemd/system" : "/lib/systemd/system"
        for (source, destination) in [(systemUnits + "/.", "usr/lib/systemd/system"), ("/usr/bin/kill", "usr/bin/kill")] {
            try FileManager.default.createDirectory(at: file(destination).deletingLastPathComponent(), withIntermediateDirectories: true)
            let copied = try run("cp", ["-r", source, file(destination).path])
            XCTAssertEqual(copied.status, 0, copied.error)
        }
        try FileManager.default.createSymbolicLink(atPath: file("bin").path, withDestinationPath: "usr/bin")
        let instances = units.map { $0.replacingOccurrences(of: "@.service", with: "@products.service") }
        let verify = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "cd \"$1\" && shift && exec systemd-analyze verify --man=no --root=\"$PWD\" \"$@\"", "verify", root.path] + instances, timeout: 120)
        XCTAssertEqual(verify.status, 0, verify.output + verify.error)
        XCTAssertEqual(verify.output + verify.error, "", "systemd-analyze verify says nothing of the installed units")

        // Removing keeps the configuration and the store directory; purging keeps the directory.
        try "store".write(to: file("var/lib/ambar/ambar.sqlite"), atomically: true, encoding: .utf8)
        let removed = try dpkg(["-r", "ambar-sync-agent"])
        XCTAssertEqual(removed.status, 0, removed.output + removed.error)
        XCTAssertFalse(exists("usr/bin/sync-agent"))
        XCTAssertFalse(exists("lib/systemd/system/ambar-hub.service"))
        XCTAssertTrue(exists("etc/ambar/hub.conf"), "a removed package's conffiles stay")
        let purged = try dpkg(["-P", "ambar-sync-agent"])
        XCTAssertEqual(purged.status, 0, purged.output + purged.error)
        XCTAssertFalse(exists("etc/ambar/hub.conf"), "purging removes the configuration")
        XCTAssertEqual(try String(contentsOf: file("var/lib/ambar/ambar.sqlite"), encoding: .utf8), "store", "the store is never removed")
    }
}
