import Foundation

/// A temporary directory for one test, removed when the test releases it, pass or fail. Its path
/// is short, so that Unix sockets inside it fit the kernel's limit on their paths.
public final class TemporaryDirectory {
    /// The directory.
    public let url: URL

    /// Creates an empty directory under the system's temporary directory.
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The file `name` in the directory.
    public func file(_ name: String = "store.sqlite") -> URL { url.appendingPathComponent(name) }

    /// The store shared by the processes of a test.
    public var store: URL { url.appendingPathComponent("shared.sqlite") }

    deinit { try? FileManager.default.removeItem(at: url) }
}
