// Built with the package trait HTTP (a default trait).
#if HTTP
    import CoreMetrics

    /// `serve`'s change streams, as counters and a gauge (with `--metrics`): what the shared reader
    /// (``ChangeBroadcast``) and the streams behind it read, and how many bytes wait for clients.
    enum ChangeStreamMetrics {
        /// Pages of transactions read for the change streams: `reader="shared"` once for every
        /// stream that keeps up, `reader="own"` by a stream catching up on its own.
        static let sharedPages = Counter(label: "ambar_serve_stream_pages_total", dimensions: [("reader", "shared")])
        static let ownPages = Counter(label: "ambar_serve_stream_pages_total", dimensions: [("reader", "own")])
        /// The events the shared reader made: one per page and distinct filter followed (and one
        /// for the unfiltered streams), however many streams share them.
        static let encodings = Counter(label: "ambar_serve_stream_encodings_total")
        /// Streams let go by the shared reader for being behind by more than their queue holds.
        static let detached = Counter(label: "ambar_serve_streams_detached_total")
        /// The bytes waiting in the streams' queues.
        static let queuedBytes = Gauge(label: "ambar_serve_stream_queued_bytes")
    }
#endif
