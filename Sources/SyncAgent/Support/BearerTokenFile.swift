import ArgumentParser
import Foundation

/// A file holding a bearer token (`--token-file`, `--metrics-token-file`; `LoadCredential=` in a
/// unit): its content without surrounding whitespace.
enum BearerTokenFile {
    /// The token in the file at `path`, given as `option`; refused when empty or unreadable.
    static func read(_ path: String, option: String) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read \(option) \(path): \(error.localizedDescription)")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ValidationError("\(option) \(path) is empty; put the bearer token in it") }
        return token
    }
}
