import Foundation

/// One process life's ``EventLog``, read back by the orchestrator.
struct EventFile {
    /// The token it had merged through when it started recording, and when.
    var start: (token: Int64, at: Int64)?
    /// Every remote transaction merged into its main context, in order.
    var merges: [(token: Int64, at: Int64)] = []
    /// History-expired events (none are expected: the soak never purges).
    var expired: [Int64] = []
    /// Failed saves by kind.
    var failures: [String: Int] = [:]
    /// Its successful saves, once the load stopped.
    var stopped: Int?
    /// Its digest ("<count> <hash>", or "failed …") at the head the orchestrator named.
    var digest: (head: Int64, text: String)?

    init(path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 2).map(String.init)
            switch words.first {
            case "start" where words.count == 3:
                if let token = Int64(words[1]), let at = Int64(words[2]) { start = (token, at) }
            case "m" where words.count == 3:
                if let token = Int64(words[1]), let at = Int64(words[2]) { merges.append((token, at)) }
            case "x" where words.count == 2:
                if let token = Int64(words[1]) { expired.append(token) }
            case "f" where words.count == 2:
                failures[words[1], default: 0] += 1
            case "stopped" where words.count == 2:
                stopped = Int(words[1])
            case "digest" where words.count == 3:
                if let head = Int64(words[1]) { digest = (head, words[2]) }
            default:
                continue
            }
        }
    }
}
