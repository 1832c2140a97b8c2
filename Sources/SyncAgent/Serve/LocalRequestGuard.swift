// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation
    import HTTPTypes
    import Hummingbird

    /// Guards a listener that takes no token (loopback or a Unix socket) against web pages: any
    /// page the operator opens can make the browser send requests to `127.0.0.1`, and through DNS
    /// rebinding read the answers as its own origin. So a request is answered only when its
    /// `Host` is a loopback name (`localhost`, a numeric loopback address) or one of
    /// `allowedHosts`, and, when it carries an `Origin`, that origin is the request's own
    /// (`http(s)://HOST` it was sent to) or one of `allowedOrigins`. Others get a 403 that says
    /// which option allows them.
    struct LocalRequestGuard: RouterMiddleware {
        typealias Context = ServeContext
        /// Host names (without a port, lower-case) answered besides the loopback ones.
        let allowedHosts: Set<String>
        /// Origins (`scheme://host[:port]`, lower-case) whose pages may read the answers.
        let allowedOrigins: Set<String>

        init(allowedHosts: [String] = [], allowedOrigins: [String] = []) {
            self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
            self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased().trimmingSuffix("/") })
        }

        func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
            // HTTP/1.1's `Host` is the request's authority once parsed.
            guard let host = request.head.authority?.lowercased(), !host.isEmpty else {
                return ServeResponses.error(.badRequest, "a Host header is required")
            }
            guard isAllowed(host: Self.name(ofHost: host)) else {
                return ServeResponses.error(
                    .forbidden,
                    "Host \(host) is not a loopback name: this server takes no token, so it answers only requests sent to localhost or a loopback address (serve --allowed-host NAME to allow another)"
                )
            }
            if let origin = request.headers[.origin]?.lowercased().trimmingSuffix("/"),
                !allowedOrigins.contains(origin), !(origin == "http://\(host)" || origin == "https://\(host)")
            {
                return ServeResponses.error(
                    .forbidden,
                    "a page from \(origin) may not read this server (it takes no token); serve --allowed-origin \(origin) allows it")
            }
            return try await next(request, context)
        }

        /// Whether `name` (a Host header's host, without its port) may be answered.
        func isAllowed(host name: String) -> Bool {
            name == "localhost" || ListenAddress.isNumericLoopback(name) || allowedHosts.contains(name)
        }

        /// The host of a `Host` header, without its port or an IPv6 address's brackets.
        static func name(ofHost host: String) -> String {
            if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
                return String(host[host.index(after: host.startIndex)..<close])
            }
            if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon { return String(host[..<colon]) }
            return host
        }
    }

    extension String {
        /// The string without `suffix` at its end, if it ends with it.
        fileprivate func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
    }
#endif
