// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import Foundation
    import HTTPTypes
    import Hummingbird
    import SharedStoreIPC

    /// `Ambar-After: TOKEN` on `/v1/objects` and `/v1/status`: read your writes. A client that
    /// saved (and learned its transaction's token) or saw a token in a change stream sends it, and
    /// the answer is read only once this server holds that transaction, so it includes it.
    ///
    /// The server waits at most ``bound`` for the transaction to reach it (its doorbell, or the
    /// ledger read it makes at once); past that the answer is a `504` with `error`, `token` and
    /// `held_through` (the token it holds every transaction through). A header that is not a whole number of 1 or
    /// more is a `400`.
    enum ReadAfterToken {
        /// The request header.
        static let header = HTTPField.Name("Ambar-After")!
        /// How long a request waits for its token before the `504`.
        static let bound: Duration = .seconds(5)

        /// Waits until `sync` holds the token the request names, if it names one. Returns nil when
        /// the request may be answered (no header, or the token is held), else the response to
        /// send instead (`400`, `504`, or `503` when sharing failed).
        static func wait(for request: Request, sync: SharedStoreSync) async -> Response? {
            guard let text = request.headers[header] else { return nil }
            guard let token = Int64(text.trimmingCharacters(in: .whitespaces)), token > 0 else {
                return ServeResponses.error(.badRequest, "Ambar-After takes a ledger token, a whole number of 1 or more, not '\(text)'")
            }
            do {
                try await sync.waitUntilMerged(token: token, timeout: bound)
                return nil
            } catch {
                if case .notMergedYet(_, let heldThrough, let waited) = error {
                    let object: [String: Any] = [
                        "error":
                            "transaction \(token) did not reach this server within \(waited) s (it holds every transaction through \(heldThrough)): check that the token comes from this store, then ask again",
                        "token": token, "held_through": heldThrough,
                    ]
                    // try?: strings and integers always serialize
                    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
                    return ServeResponses.json(data, status: .gatewayTimeout)
                }
                return ServeResponses.error(.serviceUnavailable, "\(error)")
            }
        }
    }
#endif
