import AmbarTestSupport
import Foundation
import XCTest

extension AgentTestCase {
    /// Starts `serve` with `arguments` and returns it with the address it listens on.
    func startServe(_ arguments: [String]) throws -> (Process, port: Int, log: URL) {
        let log = directory.url.appendingPathComponent("serve-\(UUID().uuidString.prefix(4)).log")
        let process = try startAgent(["serve", "--directory", directory.url.path] + arguments, log: log)
        var port: Int?
        XCTAssertTrue(
            eventually(timeout: 30) {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                // The whole line, up to its newline: a read can see a write half done, and the
                // port's digits or the scheme after them may not be there yet.
                // The address is 127.0.0.1:PORT unless --listen names another (::1 is [::1]:PORT).
                // serve's own line: Hummingbird logs "listening on" for the --metrics server too.
                if let range = text.range(of: #"sync-agent serve: listening on \S+:\d+[^\n]*\n"#, options: .regularExpression) {
                    let address = text[range].dropFirst("sync-agent serve: listening on ".count).prefix { !$0.isWhitespace }
                    port = Int(address.split(separator: ":").last ?? "")
                }
                return port != nil || !process.isRunning
            }, "serve listens")
        return (process, try XCTUnwrap(port, (try? String(contentsOf: log, encoding: .utf8)) ?? ""), log)
    }
}
