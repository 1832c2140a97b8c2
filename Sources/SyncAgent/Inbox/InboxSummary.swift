import Foundation

extension StatusReport.Inbox {
    /// The inboxes of `run` agents in the shared directory `root` (`inbox/NAME/`), by name: the
    /// files waiting, imported into `processed/NAME/` and refused into `failed/NAME/` (hidden files,
    /// which writers are still writing, and the refusals' `.error.txt` reports are not counted).
    ///
    /// A folder of an inbox that cannot be read is said in that inbox's `error`; an `inbox/`
    /// folder that cannot be read throws.
    static func all(in root: URL) throws -> [StatusReport.Inbox] {
        let names = try subfolders(of: root.appendingPathComponent("inbox", isDirectory: true))
        return names.map { summary(of: $0, in: root) }
    }

    private static func summary(of name: String, in root: URL) -> StatusReport.Inbox {
        var inbox = StatusReport.Inbox(name: name, waiting: 0, processed: 0, failed: 0)
        let failedFolder = root.appendingPathComponent("failed/\(name)", isDirectory: true)
        do {
            inbox.waiting = try Inbox.files(in: root.appendingPathComponent("inbox/\(name)", isDirectory: true)).count
            inbox.processed = try Inbox.files(in: root.appendingPathComponent("processed/\(name)", isDirectory: true)).count
            let refused = try Inbox.files(in: failedFolder).filter { !$0.hasSuffix(".error.txt") }
            inbox.failed = refused.count
            // The report is written when the file is refused (the file keeps its own time); a file
            // whose report was removed counts by its own time.
            let refusedAt = { (file: String) throws -> Date in
                try modified(failedFolder.appendingPathComponent(file + ".error.txt")) ?? modified(failedFolder.appendingPathComponent(file)) ?? .distantPast
            }
            inbox.lastFailed = try refused.max { try refusedAt($0) < refusedAt($1) }
        } catch {
            inbox.error = "cannot read its folders: \(error.localizedDescription)"
        }
        return inbox
    }

    /// The folders in `folder` (none when it does not exist), by name.
    private static func subfolders(of folder: URL) throws -> [String] {
        let manager = FileManager.default
        guard manager.fileExists(atPath: folder.path) else { return [] }
        return try manager.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted().filter { name in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }

    /// When `url` was last modified; nil when it does not exist.
    private static func modified(_ url: URL) throws -> Date? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
    }
}
