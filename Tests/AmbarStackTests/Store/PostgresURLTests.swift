import AmbarPostgres
import AmbarStack
import Foundation
import XCTest

/// Reading PostgreSQL URLs, and keeping their passwords out of every message.
final class PostgresURLTests: XCTestCase {
    func testPartsDefaultsAndParameters() throws {
        let url = try PostgresURL(
            URL(string: "postgresql://app:pw%40x@db.example:6543/inventory?sslmode=verify-full&sslrootcert=/etc/ca.pem&statement_timeout=5")!, environment: [:])
        XCTAssertEqual(url.host, "db.example")
        XCTAssertEqual(url.port, 6543)
        XCTAssertEqual(url.user, "app")
        XCTAssertEqual(url.password, "pw@x", "percent-decoded")
        XCTAssertEqual(url.database, "inventory")
        XCTAssertEqual(url.tls, .verifyFull)
        XCTAssertEqual(url.rootCertificatePath, "/etc/ca.pem")
        XCTAssertEqual(url.statementTimeout, 5)
        XCTAssertEqual(url.description, "postgres://app@db.example:6543/inventory")

        let defaults = try PostgresURL(URL(string: "postgres://db")!, environment: ["PGPASSWORD": "from-env", "PGUSER": "svc"])
        XCTAssertEqual(defaults.user, "svc")
        XCTAssertEqual(defaults.password, "from-env")
        XCTAssertEqual(defaults.database, "svc", "the database defaults to the user's name, as libpq's does")
        XCTAssertEqual(defaults.port, 5432)
        XCTAssertEqual(defaults.tls, .prefer)
    }

    func testPasswordFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pw-\(UUID().uuidString)")
        try Data("from-file\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let url = try PostgresURL(URL(string: "postgres://app@db/x?password_file=\(file.path)")!, environment: [:])
        XCTAssertEqual(url.password, "from-file")
    }

    func testErrorsNameTheProblemButNeverThePassword() {
        for (text, expected) in [
            ("postgres://app:s3cret@db/x?sslmode=sometimes", "sslmode 'sometimes'"),
            ("postgres://app:s3cret@db/x?colour=blue", "unknown parameter 'colour'"),
            ("postgres://nodb?s3cret@db:5432/x", "unknown parameter"),
            ("mysql://app:s3cret@db/x", "postgres://"),
            ("postgres://app:s3cret@db/x?statement_timeout=-1", "statement_timeout"),
        ] {
            XCTAssertThrowsError(try PostgresURL(URL(string: text)!, environment: [:]), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(expected), "\(text): \(message)")
                XCTAssertFalse(message.contains("s3cret"), "\(text): \(message)")
            }
        }
        XCTAssertEqual(PostgresURL.redacted(URL(string: "postgres://app:s3cret@db:1/x?password=s3cret")!), "postgres://app@db:1/x")
    }

    func testAnUnreadableURLFailsWhenTheStoreOpensSayingWhy() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)])])
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: model, store: .postgres(URL(string: "postgres://app:s3cret@db/x?sslmode=never")!))) {
            error in
            guard case AmbarError.serverUnavailable(let server, _, let reason, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(server, "postgres://app@db/x")
            XCTAssertTrue(reason.contains("sslmode"), reason)
            XCTAssertFalse("\(error)".contains("s3cret"))
        }
    }

    /// A server that cannot be reached: the error says so, and keeps the driver's error as its
    /// cause (which holds no password either).
    func testAnUnreachableServerKeepsTheDriversErrorAsTheCause() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)])])
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        let url = URL(string: "postgres://app:s3cret@127.0.0.1:1/x?connect_timeout=5")!
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: model, store: .postgres(url))) { error in
            guard case AmbarError.serverUnavailable(_, _, let reason, let cause) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("Connection refused"), reason)
            guard let cause else { return XCTFail("the driver's error is kept") }
            XCTAssertEqual((error as? AmbarError)?.underlyingError.map { "\($0)" }, "\(cause.error)")
            XCTAssertFalse(String(reflecting: cause.error).contains("s3cret"), "no password in the cause")
        }
    }

    func testAStackGivenAServerURLAsItsFileSaysHowToOpenIt() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)])])
        XCTAssertThrowsError(try DataStack.open(model: .model(model), storeURL: URL(string: "postgres://app:s3cret@db/x?sslmode=require")!)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("storeType: .postgres(url)"), message)
            XCTAssertFalse(message.contains("s3cret"), message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/x"), "no file was made from the URL's path")
        let type = DataStack.StoreType.postgres(URL(string: "postgres://app:s3cret@db/x?sslmode=require")!)
        guard case .server(let server) = type else { return XCTFail("\(type)") }
        XCTAssertEqual(server.location, "postgres://app@db:5432/x", "the stack's store, named without its password")
    }
}
