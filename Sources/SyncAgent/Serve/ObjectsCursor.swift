// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation

    /// Where the next page of `/v1/objects` starts: opaque to clients (`cursor=` in the `next`
    /// link), and good only for the query it was made for — the entity, predicate and sort are
    /// fingerprinted into it, so that a cursor sent with another query is refused rather than
    /// read as a position in it.
    struct ObjectsCursor: Equatable {
        /// How many objects the pages before it held, in the query's order.
        let offset: Int
        /// The query's fingerprint (``fingerprint(entity:predicate:sorts:)``).
        let fingerprint: UInt64

        /// The text clients send back: `v1.OFFSET.FINGERPRINT`, base64url.
        var text: String {
            Data("v1.\(offset).\(String(fingerprint, radix: 16))".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }

        init(offset: Int, fingerprint: UInt64) {
            self.offset = offset
            self.fingerprint = fingerprint
        }

        /// The cursor `text` names; nil when it is not one this server made.
        init?(text: String) {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard let data = Data(base64Encoded: base64) else { return nil }
            let parts = String(decoding: data, as: UTF8.self).split(separator: ".")
            guard parts.count == 3, parts[0] == "v1", let offset = Int(parts[1]), offset >= 0, let fingerprint = UInt64(parts[2], radix: 16) else {
                return nil
            }
            self.init(offset: offset, fingerprint: fingerprint)
        }

        /// FNV-1a of the query's entity, predicate and sort keys: the same in every process
        /// (Swift's `Hasher` is seeded per process, and a cursor outlives a restart of `serve`).
        static func fingerprint(entity: String, predicate: String?, sorts: [String]) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in ([entity, predicate ?? "\u{0}"] + sorts).joined(separator: "\u{1}").utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }
    }
#endif
