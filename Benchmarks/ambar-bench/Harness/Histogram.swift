import Foundation

/// An SVG histogram of two latency distributions on a logarithmic axis, for docs/benchmarks/.
enum Histogram {
    static func svg(title: String, series: [(name: String, color: String, nanoseconds: [Int64])]) -> String {
        let width = 760.0
        let height = 360.0
        let left = 60.0
        let right = 20.0
        let top = 40.0
        let bottom = 50.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        // Bins: 10 per decade from 10 µs to 10 ms.
        let low = 1.0
        let high = 4.0  // log10 of µs
        let binCount = Int((high - low) * 10)
        func bin(_ ns: Int64) -> Int {
            let us = max(Double(ns) / 1000, 1)
            return min(binCount - 1, max(0, Int((log10(us) - low) * 10)))
        }
        let counts = series.map { s -> [Double] in
            var c = [Double](repeating: 0, count: binCount)
            for v in s.nanoseconds { c[bin(v)] += 1 }
            let total = Double(max(s.nanoseconds.count, 1))
            return c.map { $0 / total }
        }
        let peak = max(counts.flatMap { $0 }.max() ?? 1, 0.01)
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(left))" y="22" font-size="14">\(title)</text>

            """
        let barWidth = plotWidth / Double(binCount)
        for (index, s) in series.enumerated() {
            for (i, fraction) in counts[index].enumerated() where fraction > 0 {
                let h = fraction / peak * plotHeight
                let x = left + Double(i) * barWidth + Double(index) * barWidth / Double(series.count)
                func f(_ v: Double) -> String { String(format: "%.1f", v) }
                out +=
                    "<rect x=\"\(f(x))\" y=\"\(f(top + plotHeight - h))\" width=\"\(f(barWidth / Double(series.count) - 0.5))\" height=\"\(f(h))\" fill=\"\(s.color)\" opacity=\"0.8\"/>\n"
            }
            out += "<rect x=\"\(Int(width - 250))\" y=\"\(Int(top + Double(index) * 18))\" width=\"12\" height=\"12\" fill=\"\(s.color)\"/>"
            out += "<text x=\"\(Int(width - 232))\" y=\"\(Int(top + 10 + Double(index) * 18))\">\(s.name) (n=\(s.nanoseconds.count))</text>\n"
        }
        out += "<line x1=\"\(Int(left))\" y1=\"\(Int(top + plotHeight))\" x2=\"\(Int(left + plotWidth))\" y2=\"\(Int(top + plotHeight))\" stroke=\"black\"/>\n"
        for (label, exponent) in [("10 µs", 1.0), ("100 µs", 2.0), ("1 ms", 3.0), ("10 ms", 4.0)] {
            let x = left + (exponent - low) / (high - low) * plotWidth
            out += "<line x1=\"\(Int(x))\" y1=\"\(Int(top + plotHeight))\" x2=\"\(Int(x))\" y2=\"\(Int(top + plotHeight + 5))\" stroke=\"black\"/>"
            out += "<text x=\"\(Int(x) - 18)\" y=\"\(Int(top + plotHeight + 20))\">\(label)</text>\n"
        }
        out += "<text x=\"\(Int(left + plotWidth / 2 - 120))\" y=\"\(Int(height - 8))\">commit start → visible in the receiver (log scale)</text>\n"
        out += "<text x=\"14\" y=\"\(Int(top + plotHeight / 2))\" transform=\"rotate(-90 14 \(Int(top + plotHeight / 2)))\">share of deliveries</text>\n"
        return out + "</svg>\n"
    }
}
