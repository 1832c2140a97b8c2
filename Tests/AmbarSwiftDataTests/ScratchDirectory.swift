import Foundation

/// A directory of its own for one test's stores, removed when the test releases it, pass or fail.
final class ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-sd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The file `name` in the directory.
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }  // try?: cleanup; a leftover temporary file is harmless
}
