// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging

    /// Refuses requests without `Authorization: Bearer <token>`: 401 with `WWW-Authenticate: Bearer`,
    /// logged with the client's address and the request's path, never with a token, and at most
    /// once a minute per address (with how many refusals went unlogged since). `GET` of a path in
    /// `openPaths` (a page that holds no data) passes without one.
    struct BearerTokenMiddleware: RouterMiddleware {
        typealias Context = ServeContext
        let token: [UInt8]
        let openPaths: Set<String>
        let refusals = RefusalLog()

        init(token: String, openPaths: Set<String> = []) {
            self.token = Array(token.utf8)
            self.openPaths = openPaths
        }

        func handle(_ request: Request, context: ServeContext, next: (Request, ServeContext) async throws -> Response) async throws -> Response {
            if request.method == .get && openPaths.contains(request.uri.path) { return try await next(request, context) }
            let presented = request.headers[.authorization].flatMap { value -> [UInt8]? in
                guard value.lowercased().hasPrefix("bearer ") else { return nil }
                return Array(value.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces).utf8)
            }
            guard let presented, Self.equalInConstantTime(presented, token) else {
                let address = context.channel.remoteAddress.map { $0.ipAddress ?? "\($0)" } ?? "unix socket"
                if let unlogged = refusals.shouldLog(address) {
                    context.logger.warning(
                        "refused a request without a valid bearer token",
                        metadata: [
                            "path": "\(request.uri.path)", "client": "\(context.channel.remoteAddress.map { "\($0)" } ?? "unix socket")",
                            "reason": "\(request.headers[.authorization] == nil ? "no Authorization header" : "wrong token")",
                            "unlogged_refusals_since_last": "\(unlogged)",
                        ])
                }
                var headers = HTTPFields()
                headers[.wwwAuthenticate] = "Bearer"
                headers[.contentType] = "application/json"
                return Response(
                    status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: #"{"error":"a valid bearer token is required"}"#)))
            }
            return try await next(request, context)
        }

        /// Compares without stopping at the first difference, so the time taken says nothing of the token.
        static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
            for i in 0..<max(a.count, b.count) {
                difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
            }
            return difference == 0
        }
    }
#endif
