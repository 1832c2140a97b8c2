import AmbarStack
import Foundation

/// Workload 8: peak resident memory importing many objects in batches, in a fresh child process
/// each, against the raw C API inserting the same rows in one transaction.
struct Memory {
    let objects: Int
    let batchSize: Int

    func run(into report: inout Report) throws {
        progress("memory: importing \(objects) objects in a child process")
        let scratch = try ScratchDirectory("memory")
        defer { scratch.remove() }
        let ambar = try peak(role: "memory-ambar", [String(objects), String(batchSize), scratch.file("ambar.sqlite").path])
        let raw = try peak(role: "memory-raw", [String(objects), scratch.file("raw.sqlite").path])
        report.results.append(
            WorkloadResult(
                number: 8, title: "Memory",
                figures: [
                    Figure(
                        approach: "AmbarStack: \(objects) objects, batches of \(batchSize), peak RSS", value: ambar, unit: "MB", ratio: ambar / raw,
                        ratioAgainst: "raw"),
                    Figure(approach: "raw SQLite C API, same rows, peak RSS", value: raw, unit: "MB"),
                ],
                target: objects >= 1_000_000 ? "< 150 MB for 1,000,000 objects" : "(smoke: no target)",
                met: objects >= 1_000_000 ? ambar < 150 : nil,
                note: "VmHWM of a fresh process that does nothing else"))
    }

    private func peak(role: String, _ arguments: [String]) throws -> Double {
        let child = try ChildProcess(role: role, arguments)
        let line = child.line()
        guard let bytes = Double(line) else { throw BenchError("\(role) said \(line)") }
        return bytes / 1_000_000
    }

    /// Child side: imports through an importer context, resetting it after each batch.
    static func ambarChild(objects: Int, batchSize: Int, file: URL) throws -> Never {
        let coordinator = try PersistentStoreCoordinator(model: try Dataset.model(), store: .sqlite(file))
        let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "importer")
        try importItems(into: importer, 0..<objects, batchSize: batchSize, uid: { "uid-\($0)" }, name: { "Item \($0)" })
        say(String(peakResidentBytes()))
        exit(0)
    }

    /// Child side: the same rows through the raw C API.
    static func rawChild(objects: Int, file: URL) throws -> Never {
        let raw = try RawDatabase(path: file.path)
        try raw.exec(Dataset.createTable)
        try raw.exec("BEGIN IMMEDIATE")
        try raw.insert(0..<objects, uid: { "uid-\($0)" }, name: { "Item \($0)" })
        try raw.exec("COMMIT")
        say(String(peakResidentBytes()))
        exit(0)
    }
}
