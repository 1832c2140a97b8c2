import Foundation

/// One measured figure: a workload done one way.
struct Figure: Codable {
    /// Who did the work: "AmbarStack …" or a baseline ("raw SQLite C API …", "GRDB …").
    var approach: String
    var value: Double
    /// "rows/s", "µs", "ms", "MB", "msg/s".
    var unit: String
    /// This figure divided by the baseline's, measured in the same run (nil for baselines).
    var ratio: Double?
    /// The approach the ratio is taken against.
    var ratioAgainst: String?
}

/// A workload's figures, its target and whether this run met it.
struct WorkloadResult: Codable {
    var number: Int
    var title: String
    var figures: [Figure]
    var target: String
    var met: Bool?
    /// What bounds the figure, or how to read it.
    var note: String?
}

/// Everything one run measured.
struct Report: Codable {
    var date: String
    var mode: String
    var machine: Machine
    var results: [WorkloadResult] = []

    /// The table printed at the end of a run.
    func table() -> String {
        var lines = ["", "ambar-bench (\(mode)) on \(machine.summary)", ""]
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        lines.append(pad("workload", 28) + pad("approach", 72) + pad("figure", 18) + pad("ratio", 9) + "target")
        for result in results {
            for (i, figure) in result.figures.enumerated() {
                let ratio = figure.ratio.map { Self.format(ratio: $0) } ?? ""
                let target = i == 0 ? "\(result.target)\(result.met.map { $0 ? "  met" : "  MISSED" } ?? "")" : ""
                lines.append(
                    pad(i == 0 ? "\(result.number). \(result.title)" : "", 28) + pad(figure.approach, 72)
                        + pad(Self.format(figure.value, figure.unit), 18) + pad(ratio, 9) + target)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The Markdown page under docs/benchmarks/.
    func markdown() -> String {
        var out = """
            # AmbarStack benchmarks

            Latest run: \(date), \(mode). Produced by `scripts/run-benchmarks` (release build); every ratio
            is against a baseline measured in the same run on the same machine.

            Machine: \(machine.summary).

            | workload | approach | figure | ratio | target |
            |---|---|---|---|---|

            """
        for result in results {
            for (i, figure) in result.figures.enumerated() {
                let target = i == 0 ? "\(result.target)\(result.met.map { $0 ? " — met" : " — **missed**" } ?? "")" : ""
                out +=
                    "| \(i == 0 ? "\(result.number). \(result.title)" : "") | \(figure.approach) | \(Self.format(figure.value, figure.unit)) | \(figure.ratio.map { Self.format(ratio: $0) + (figure.ratioAgainst.map { " vs \($0)" } ?? "") } ?? "") | \(target) |\n"
            }
        }
        let notes = results.compactMap { r in r.note.map { "- **\(r.number). \(r.title)**: \($0)" } }
        if !notes.isEmpty { out += "\n## Notes\n\n" + notes.joined(separator: "\n") + "\n" }
        if results.contains(where: { $0.number == 6 }) {
            out += "\n![commit → merged latency, workload 6](cross-process-latency.svg)\n"
        }
        return out
    }

    static func format(_ value: Double, _ unit: String) -> String {
        guard value.isFinite else { return "n/a" }
        switch unit {
        case "rows/s", "msg/s", "saves/s", "commits/s", "fetches/s":
            return value >= 10_000 ? "\(Int(value.rounded()).formatted(.number.grouping(.automatic))) \(unit)" : String(format: "%.0f \(unit)", value)
        case "µs": return String(format: value < 10 ? "%.1f µs" : "%.0f µs", value)
        case "ms": return String(format: value < 10 ? "%.2f ms" : "%.0f ms", value)
        case "MB": return String(format: "%.1f MB", value)
        default: return String(format: "%.3g \(unit)", value)
        }
    }

    static func format(ratio: Double) -> String { ratio.isFinite ? String(format: "%.2f×", ratio) : "n/a" }
}
