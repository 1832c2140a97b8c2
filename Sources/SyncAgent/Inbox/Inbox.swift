import AmbarCore
import AmbarDataStack
import Foundation

/// The folders of one `run` agent: files are dropped into `inbox/NAME/` (written elsewhere, then
/// renamed in), and end in `processed/NAME/` or in `failed/NAME/` with `<file>.error.txt` beside.
struct Inbox {
    let incoming: URL
    let processed: URL
    let failed: URL

    /// The folders of agent `name` in the shared directory `root`, created if missing.
    init(root: URL, name: String) throws {
        incoming = root.appendingPathComponent("inbox/\(name)", isDirectory: true)
        processed = root.appendingPathComponent("processed/\(name)", isDirectory: true)
        failed = root.appendingPathComponent("failed/\(name)", isDirectory: true)
        for folder in [incoming, processed, failed] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
    }

    /// The files waiting, oldest name first. Hidden files (`.name`, typical of writers still
    /// writing) and folders are ignored.
    ///
    /// - Throws: why the inbox folder cannot be read (its permissions, its file system): an
    ///   inbox that cannot be read is not an empty one.
    func waiting() throws -> [URL] {
        try Self.files(in: incoming).map { incoming.appendingPathComponent($0) }
    }

    /// The names of the files in `folder`, sorted, without hidden files and folders; none when
    /// `folder` does not exist. Throws when it exists but cannot be read.
    static func files(in folder: URL) throws -> [String] {
        let manager = FileManager.default
        guard manager.fileExists(atPath: folder.path) else { return [] }
        return try manager.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted().filter { name in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }

    /// Moves `file` to `processed/`; an existing file of that name there is kept by suffixing.
    func markProcessed(_ file: URL) throws { try move(file, to: processed) }

    /// Writes `report` into `failed/` as `<file>.error.txt`, then moves `file` beside it, so a file
    /// seen in `failed/` always has its reason there already.
    func markFailed(_ file: URL, report: String) throws {
        let destination = freeDestination(for: file, in: failed)
        try report.write(to: URL(fileURLWithPath: destination.path + ".error.txt"), atomically: true, encoding: .utf8)
        try rename(file, to: destination)
    }

    private func move(_ file: URL, to folder: URL) throws {
        try rename(file, to: freeDestination(for: file, in: folder))
    }

    /// `folder/<name>`, or `folder/<name>.2`, `.3`… when that name (or its report) is taken.
    private func freeDestination(for file: URL, in folder: URL) -> URL {
        var destination = folder.appendingPathComponent(file.lastPathComponent)
        var attempt = 1
        while FileManager.default.fileExists(atPath: destination.path) || FileManager.default.fileExists(atPath: destination.path + ".error.txt") {
            attempt += 1
            destination = folder.appendingPathComponent("\(file.lastPathComponent).\(attempt)")
        }
        return destination
    }

    private func rename(_ file: URL, to destination: URL) throws {
        // rename(2): atomic, and the file is never in two places.
        guard Glibc.rename(file.path, destination.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
    }

    /// The idempotency key of `file` for agent `name`: its name, identity and content checksum,
    /// so the same drop is recognized after a crash and a new drop of the same name is not.
    static func idempotencyKey(for file: URL, agent name: String) throws -> String {
        var info = stat()
        guard stat(file.path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: file.path]) }
        let data = try Data(contentsOf: file, options: .alwaysMapped)
        var hash = FNV1a()
        hash.combine(data)
        return "run:\(name):\(file.lastPathComponent):\(info.st_dev):\(info.st_ino):\(data.count):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(hash.hex)"
    }
}
