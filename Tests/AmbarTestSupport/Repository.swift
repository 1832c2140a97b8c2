import Foundation

/// Places in this repository, for tests that read its files (fixtures, scripts, units, examples):
/// found from this file's own place, so a test file can move between folders.
public enum Repository {
    /// The repository's root directory.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // AmbarTestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// The file or directory at `relativePath` from the root.
    public static func url(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }

    /// The engine tests' fixtures (model files, predicates).
    public static var fixtures: URL { url("Tests/AmbarStackTests/Fixtures") }
}
