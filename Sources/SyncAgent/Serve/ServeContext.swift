// Built with the package trait HTTP (a default trait).
#if HTTP
    import Hummingbird
    import NIOCore

    /// The request context of `sync-agent serve`: Hummingbird's, plus the connection's channel, so that
    /// a change stream whose client stopped reading can be closed.
    struct ServeContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        let channel: any Channel

        init(source: ApplicationRequestContextSource) {
            self.coreContext = .init(source: source)
            self.channel = source.channel
        }
    }
#endif
