// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOCore

    /// What one audience of change streams (``StreamAudience``) is sent for a page of ledger
    /// transactions: each transaction's events, in token order, up to a transaction that could
    /// not be sent.
    struct PageEvents: Sendable {
        /// One transaction's events; the last carries its `id:`. None for a transaction that
        /// touches nothing a filtered audience follows.
        struct Transaction: Sendable {
            let token: Int64
            let buffers: [ByteBuffer]
        }

        var transactions: [Transaction] = []
        /// The transaction that could not be sent (the stream ends before it), if one could not.
        var failure: ChangeStreamEndpoint.Failure?

        /// What a client whose position is `position` is sent: the events of the transactions
        /// after it and, when the last of those sent nothing, its `id:` alone (so that the
        /// client's position still moves); then the failure's `event: error`, if there is one.
        func entries(after position: Int64) -> [StreamQueue.Entry] {
            var entries: [StreamQueue.Entry] = []
            var last: (token: Int64, sent: Bool)?
            for transaction in transactions where transaction.token > position {
                for (index, buffer) in transaction.buffers.enumerated() {
                    entries.append(StreamQueue.Entry(buffer: buffer, position: index == transaction.buffers.count - 1 ? transaction.token : nil))
                }
                last = (transaction.token, !transaction.buffers.isEmpty)
            }
            if let last, !last.sent { entries.append(StreamQueue.Entry(buffer: ByteBuffer(string: "id: \(last.token)\n\n"), position: last.token)) }
            if let failure { entries.append(StreamQueue.Entry(buffer: failure.event, position: nil)) }
            return entries
        }
    }
#endif
