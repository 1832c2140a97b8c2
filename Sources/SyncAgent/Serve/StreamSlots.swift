// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOConcurrencyHelpers

    /// How many change streams may be open at once (`--max-streams`): each holds a reader, a
    /// queue and a connection for as long as its client follows, so past the cap a request is
    /// answered `503 Service Unavailable` with `Retry-After` instead of being taken on.
    final class StreamSlots: Sendable {
        /// The cap when `--max-streams` is not given.
        static let defaultMaximum = 1_000

        /// One open stream's slot: given back once, when the stream's body ends or, if it never
        /// runs (the client went before it began), when the response is dropped.
        final class Slot: Sendable {
            private let slots: StreamSlots
            private let held = NIOLockedValueBox(true)

            fileprivate init(_ slots: StreamSlots) { self.slots = slots }

            /// Gives the slot back (once).
            func release() {
                if held.withLockedValue({ held in
                    defer { held = false }
                    return held
                }) {
                    slots.open.withLockedValue { $0 -= 1 }
                }
            }

            deinit { release() }
        }

        let maximum: Int
        private let open = NIOLockedValueBox(0)

        init(maximum: Int) { self.maximum = maximum }

        /// A slot, or nil when `maximum` streams are open.
        func take() -> Slot? {
            let taken = open.withLockedValue { open -> Bool in
                guard open < maximum else { return false }
                open += 1
                return true
            }
            return taken ? Slot(self) : nil
        }

        /// How many streams are open.
        var current: Int { open.withLockedValue { $0 } }
    }
#endif
