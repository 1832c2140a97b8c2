// Built with the package trait HTTP (a default trait).
#if HTTP
    import ArgumentParser
    import Hummingbird
    import HummingbirdCore

    #if TLS
        import HummingbirdTLS
        import NIOSSL
    #endif

    /// HTTPS for `sync-agent serve`, which the package trait `TLS` builds in (a default trait:
    /// `swift build` has it; `scripts/run-demo` builds the agent without it, which spares a first
    /// build swift-nio-ssl's BoringSSL).
    ///
    /// An agent built without it refuses `--tls-certificate` at once, saying how to build one that
    /// has it: it never serves plain HTTP where HTTPS was asked for.
    enum ServeTLS {
        #if TLS
            /// The server's certificate chain and key.
            typealias Settings = TLSConfiguration
        #else
            /// Never made: this build cannot serve HTTPS.
            struct Settings: Sendable {}
        #endif

        /// The settings from `--tls-certificate` and `--tls-key` (TLS 1.2 or newer); nil without them.
        static func settings(certificate: String?, key: String?) throws -> Settings? {
            guard let certificate, let key else { return nil }
            #if TLS
                let chain: [NIOSSLCertificate]
                do {
                    chain = try NIOSSLCertificate.fromPEMFile(certificate)
                } catch {
                    throw ValidationError("cannot read a PEM certificate from --tls-certificate \(certificate): \(error)")
                }
                guard !chain.isEmpty else { throw ValidationError("--tls-certificate \(certificate) holds no PEM certificate") }
                let privateKey: NIOSSLPrivateKey
                do {
                    privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                } catch {
                    throw ValidationError("cannot read a PEM private key from --tls-key \(key): \(error)")
                }
                var configuration = TLSConfiguration.makeServerConfiguration(
                    certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
                // TLS 1.0 and 1.1 are deprecated (RFC 8996): a client that offers nothing newer
                // fails the handshake.
                configuration.minimumTLSVersion = .tlsv12
                return configuration
            #else
                throw ValidationError(
                    "--tls-certificate: this sync-agent was built without TLS (its package trait TLS was off). Build one with it: `swift build -c release --product sync-agent` (the default traits)."
                )
            #endif
        }

        /// Hummingbird's server: HTTP/1.1 with `http1`'s configuration, inside TLS when
        /// `settings` are given.
        static func server(_ settings: Settings?, http1: HTTP1Channel.Configuration) throws -> HTTPServerBuilder {
            #if TLS
                if let settings { return try .tls(.http1(configuration: http1), tlsConfiguration: settings) }
            #endif
            return .http1(configuration: http1)
        }
    }
#endif
