// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation
    import HTTPTypes
    import Hummingbird

    /// JSON responses of `sync-agent serve`.
    enum ServeResponses {
        /// `body` as `application/json`.
        static func json(_ body: Data, status: HTTPResponse.Status = .ok) -> Response {
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }

        /// `{"error": message}` (and `position` for a bad predicate format) with `status`.
        static func error(_ status: HTTPResponse.Status, _ message: String, position: Int? = nil) -> Response {
            var object: [String: Any] = ["error": message]
            if let position { object["position"] = position }
            // try?: a string and an integer always serialize
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
            return json(data, status: status)
        }
    }
#endif
