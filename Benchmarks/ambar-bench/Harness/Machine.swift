import Foundation
import GRDBSQLite

/// The machine a run measured, as the table and docs/benchmarks/ describe it.
struct Machine: Codable {
    var cpu: String
    var cores: Int
    var memoryGiB: Double
    var kernel: String
    var sqlite: String
    var swift: String

    static func current() -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let cpu =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown CPU"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #if swift(>=6.3)
            let swift = "6.3 or later"
        #else
            let swift = "6.x"
        #endif
        return Machine(
            cpu: cpu, cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824,
            kernel: release, sqlite: String(cString: sqlite3_libversion()), swift: swift)
    }

    var summary: String {
        "\(cpu), \(cores) cores, \(Int(memoryGiB.rounded())) GiB, Linux \(kernel), SQLite \(sqlite), Swift \(swift)"
    }
}
