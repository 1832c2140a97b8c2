import Foundation

/// One process life's ``EventLog``, read back by the orchestrator.
struct EventFile {
    /// The token it had merged through when it started recording, and when.
    var start: (token: Int64, at: Int64)?
    /// Its process instance.
    var instance: UInt64?
    /// Every remote transaction merged into its main context, in order, with the instance the
    /// merge event named.
    var merges: [(token: Int64, at: Int64, instance: UInt64)] = []
    /// Hub messages that disagreed with the ledger, as counted when it made its digest.
    var rejected = 0
    /// History-expired events (none are expected: purges never pass a live consumer, and no
    /// process is frozen for as long as the consumer lease).
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
            let words = line.split(separator: " ", maxSplits: 3).map(String.init)
            switch words.first {
            case "instance" where words.count == 2:
                instance = UInt64(words[1])
            case "start" where words.count == 3:
                if let token = Int64(words[1]), let at = Int64(words[2]) { start = (token, at) }
            case "m" where words.count == 4:
                if let token = Int64(words[1]), let at = Int64(words[2]), let instance = UInt64(words[3]) { merges.append((token, at, instance)) }
            case "rejected" where words.count == 2:
                rejected = Int(words[1]) ?? 0
            case "x" where words.count == 2:
                if let token = Int64(words[1]) { expired.append(token) }
            case "f" where words.count == 2:
                failures[words[1], default: 0] += 1
            case "stopped" where words.count == 2:
                stopped = Int(words[1])
            case "digest" where words.count >= 3:
                if let head = Int64(words[1]) { digest = (head, words.dropFirst(2).joined(separator: " ")) }
            default:
                continue
            }
        }
    }
}
