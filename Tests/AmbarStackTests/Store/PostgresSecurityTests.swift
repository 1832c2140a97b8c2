import AmbarPostgres
import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A server of its own that takes only TLS connections with SCRAM-SHA-256 passwords, its
/// certificate signed by a CA made for the test: the store connects with `sslmode=verify-full`,
/// refuses what it must, and never says the password.
final class PostgresSecurityTests: XCTestCase {
    var server: PostgresTestServer!
    var certificates: URL!
    static let password = "Corr3ct-Horse-9b1"

    override func setUpWithError() throws {
        do {
            server = try PostgresTestServer.startPrivate()
        } catch  where !PostgresTestServer.isRequired {
            throw XCTSkip("no PostgreSQL server on this machine: \(error)")
        }
        certificates = URL(fileURLWithPath: server.directory).appendingPathComponent("certs")
        try FileManager.default.createDirectory(at: certificates, withIntermediateDirectories: true)
        func openssl(_ arguments: [String]) throws {
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/openssl"), arguments, timeout: 60)
            guard result.status == 0 else { throw PostgresTestServer.Unavailable(description: "openssl \(arguments.first ?? ""): \(result.error)") }
        }
        let dir = certificates.path
        try openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Ambar test CA",
            "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem",
        ])
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr"])
        try Data("subjectAltName=DNS:localhost\n".utf8).write(to: certificates.appendingPathComponent("san.ext"))
        try openssl([
            "x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "\(dir)/san.ext", "-out", "\(dir)/server.pem",
        ])
        // The server reads its key as its own user, and only from a file no one else can read.
        _ = try ProcessRunner.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "postgres", dir], timeout: 10)
        _ = try ProcessRunner.run(URL(fileURLWithPath: "/bin/chmod"), ["600", "\(dir)/server.key"], timeout: 10)
        for statement in [
            "ALTER SYSTEM SET ssl = on",
            "ALTER SYSTEM SET ssl_cert_file = '\(dir)/server.pem'",
            "ALTER SYSTEM SET ssl_key_file = '\(dir)/server.key'",
            "ALTER SYSTEM SET password_encryption = 'scram-sha-256'",
        ] {
            let result = try server.psql(["-d", "postgres", "-c", statement])
            XCTAssertEqual(result.status, 0, result.error)
        }
        // TCP: TLS and SCRAM only. (The socket in the server's directory stays trusted, for psql.)
        let hba = URL(fileURLWithPath: server.directory).appendingPathComponent("data/pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("host") }
        try (rules.joined(separator: "\n") + "\nhostssl all all 127.0.0.1/32 scram-sha-256\nhostssl all all ::1/128 scram-sha-256\n")
            .write(to: hba, atomically: false, encoding: .utf8)
        let reload = try server.psql(["-d", "postgres", "-c", "SELECT pg_reload_conf()"])
        XCTAssertEqual(reload.status, 0, reload.error)
        for statement in ["CREATE ROLE app LOGIN PASSWORD '\(Self.password)'", "CREATE DATABASE app OWNER app"] {
            let result = try server.psql(["-d", "postgres", "-c", statement])
            XCTAssertEqual(result.status, 0, result.error)
        }
    }

    override func tearDown() { server = nil }

    func url(host: String = "localhost", user: String = "app", password: String? = password, mode: String = "verify-full", extra: String = "") -> URL {
        let credentials = password.map { "\(user):\($0)" } ?? user
        return URL(string: "postgres://\(credentials)@\(host):\(server.port)/app?sslmode=\(mode)&sslrootcert=\(certificates.path)/ca.pem\(extra)")!
    }

    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [EntityDescription("Note", properties: [.attribute("text", .string)])])
    }

    func testVerifiedTLSWithSCRAMSavesAndReads() throws {
        let coordinator = try PersistentStoreCoordinator(model: try model(), store: .postgres(url()))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws(AmbarError) in
            try context.insertObject(entityName: "Note").setValue(.string("over TLS"), forKey: "text")
            try context.save()
        }
        let ssl = try server.psql([
            "-d", "postgres", "-At", "-c", "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND usename = 'app'",
        ])
        XCTAssertGreaterThan(Int(ssl.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 0, "the connections use TLS")
        // The password from a file (LoadCredential=), not the URL.
        let file = URL(fileURLWithPath: server.directory).appendingPathComponent("password")
        try Data("\(Self.password)\n".utf8).write(to: file)
        let fromFile = try PersistentStoreCoordinator(model: try model(), store: .postgres(url(password: nil, extra: "&password_file=\(file.path)")))
        XCTAssertEqual(try fromFile.historySummary().headToken, 1)
    }

    func testRefusalsAreClearAndNeverShowThePassword() throws {
        func refusal(_ url: URL, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try PersistentStoreCoordinator(model: try model(), store: .postgres(url)), file: file, line: line) { error in
                let message = "\(error)"
                XCTAssertTrue(message.localizedCaseInsensitiveContains(expected), "expected '\(expected)' in: \(message)", file: file, line: line)
                XCTAssertFalse(
                    message.contains(Self.password) || message.contains("wrong-Pa55"), "the message shows a password: \(message)", file: file, line: line)
                guard case AmbarError.serverUnavailable = error else { return XCTFail("not serverUnavailable: \(error)", file: file, line: line) }
            }
        }
        refusal(url(password: "wrong-Pa55"), "password authentication failed")
        refusal(url(mode: "disable"), "no pg_hba.conf entry")
        refusal(url(host: "127.0.0.1"), "certificate does not name")  // it names localhost, not 127.0.0.1
        // verify-ca checks the signature only: the same address is accepted.
        XCTAssertNoThrow(try PersistentStoreCoordinator(model: try model(), store: .postgres(url(host: "127.0.0.1", mode: "verify-ca"))))
    }
}
