import AmbarTestSupport
import Foundation
import XCTest

/// Reading an agent's `--metrics` endpoint as Prometheus reads it.
extension AgentTestCase {
    /// Reads `/metrics` at an http URL or `unix:PATH` with prometheus_client's text parser: every
    /// sample as (name, labels, value).
    static let metricsScraper = """
        import http.client, json, socket, sys, urllib.request
        from prometheus_client.parser import text_string_to_metric_families
        where = sys.argv[1]
        if where.startswith("unix:"):
            class UnixConnection(http.client.HTTPConnection):
                def connect(self):
                    self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    self.sock.settimeout(5)
                    self.sock.connect(where[len("unix:"):])
            connection = UnixConnection("localhost")
            connection.request("GET", "/metrics")
            response = connection.getresponse()
            assert response.status == 200, response.status
            text = response.read().decode()
        else:
            text = urllib.request.urlopen(where, timeout=5).read().decode()
        print(json.dumps([[s.name, s.labels, s.value] for f in text_string_to_metric_families(text) for s in f.samples]))
        """

    struct MetricSample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    func scrape(_ url: String) throws -> [MetricSample] {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.metricsScraper, url], timeout: 20)
        guard result.status == 0 else {
            XCTFail("the Prometheus parser could not read \(url) (scripts/install-deps --tests installs python3-prometheus-client): \(result.error)")
            return []
        }
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[Any]])
        return rows.compactMap { row in
            guard row.count == 3, let name = row[0] as? String, let labels = row[1] as? [String: String], let value = row[2] as? Double else { return nil }
            return MetricSample(name: name, labels: labels, value: value)
        }
    }

    /// The value of the sample `name` with (at least) `labels`, or nil when there is none.
    func value(_ samples: [MetricSample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }?.value
    }

    /// Waits for the "metrics at http://HOST:PORT/metrics" (or "unix:PATH") line in `log`.
    func metricsEndpoint(in log: URL) throws -> String {
        var found: String?
        XCTAssertTrue(
            eventually(timeout: 30) {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                guard let range = text.range(of: #"metrics at \S+\n"#, options: .regularExpression) else { return false }
                found = String(text[range].dropFirst("metrics at ".count).dropLast())
                return true
            }, "the endpoint's address is printed")
        return try XCTUnwrap(found)
    }
}
