import Foundation

/// CLOCK_MONOTONIC in nanoseconds: system-wide, so timestamps compare across processes.
func now() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}

/// What went wrong in a benchmark run.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The wall time `body` takes, in seconds.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return Double(now() - start) / 1e9
}

/// The seconds `body` takes, awaited.
func secondsAwaiting(_ body: () async throws -> Void) async rethrows -> Double {
    let start = now()
    try await body()
    return Double(now() - start) / 1e9
}

/// The median of `values` (the upper one for an even count).
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    return values.sorted()[values.count / 2]
}

/// The `p` quantile (0…1) of already sorted `values`.
func percentile<T: BinaryInteger>(_ sorted: [T], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
}

/// A fresh directory under the temporary directory, removed by ``remove()``.
struct ScratchDirectory {
    let url: URL

    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-bench-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Writes a line to standard output at once (child processes talk to the parent this way).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Writes progress to standard error, so standard output stays the table.
func progress(_ line: String) { FileHandle.standardError.write(Data(("  · " + line + "\n").utf8)) }

/// Peak resident set size of this process, in bytes (`VmHWM` in /proc/self/status).
func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes * 1024
    }
    return 0
}
