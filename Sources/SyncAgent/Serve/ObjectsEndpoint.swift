// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdCore

    /// `GET /v1/objects/ENTITY?predicate=FORMAT&sort=KEY[:desc]&limit=N&cursor=C`: one page of the
    /// matching objects as a JSON array, each as `fetch --json` prints it. `sort` repeats or takes a
    /// comma-separated list; ties are broken by the objects' primary keys, so the order is total.
    ///
    /// A page holds at most `limit` objects (``defaultLimit`` when not given, at most
    /// ``maximumLimit``). When there may be more, the response has a `Link: <URL>; rel="next"`
    /// header: the same request with an opaque `cursor`. Pages are read at different moments: an
    /// object inserted, deleted or re-sorted between two of them can cross the page boundary (read
    /// twice, or not at all); a snapshot stream (`/v1/changes?entity=…&snapshot=true`) is the exact
    /// copy. A bad format is a 400 with `error` and `position`; an unknown entity a 404; a cursor
    /// made for another query, or not made by this server, a 400.
    struct ObjectsEndpoint: Sendable {
        let stack: DataStack
        let reads: StoreReadPool
        /// The page size when a request gives no `limit`.
        static let defaultLimit = 1_000
        /// The largest `limit` a request may give.
        static let maximumLimit = 10_000
        static let linkHeader = HTTPField.Name("Link")!

        func response(_ request: Request, context: ServeContext) async throws -> Response {
            let uri = request.uri
            guard let entity = context.parameters.get("entity") else { return ServeResponses.error(.badRequest, "name an entity: /v1/objects/ENTITY") }
            let model = try stack.model
            guard model.entity(named: entity) != nil else {
                return ServeResponses.error(
                    .notFound, "the store has no entity named '\(entity)' (it has: \(model.entityNames.sorted().joined(separator: ", ")))")
            }
            var fetch = FetchRequest<ManagedObject>(entityName: entity)
            let query = QueryParameters(request.uri.query)
            if let format = query["predicate"] {
                do throws(AmbarError) {
                    fetch.predicate = try ObjectPredicate(format: format)
                } catch {
                    if case .invalidPredicateFormat(_, let position, _) = error {
                        return ServeResponses.error(.badRequest, "\(error)", position: position)
                    }
                    return ServeResponses.error(.badRequest, "\(error)")
                }
            }
            let sorts = query.all("sort").flatMap { $0.split(separator: ",").map(String.init) }
            fetch.sortDescriptors = FetchCommand.sortDescriptors(sorts)
            var limit = Self.defaultLimit
            if let text = query["limit"] {
                guard let given = Int(text), given >= 0 else { return ServeResponses.error(.badRequest, "limit takes a whole number, 0 or more, not \(text)") }
                guard given <= Self.maximumLimit else {
                    return ServeResponses.error(.badRequest, "limit is at most \(Self.maximumLimit); read the rest by the Link rel=\"next\" of each page")
                }
                limit = given
            }
            let fingerprint = ObjectsCursor.fingerprint(entity: entity, predicate: query["predicate"], sorts: sorts)
            var offset = 0
            if let text = query["cursor"] {
                guard let cursor = ObjectsCursor(text: text) else {
                    return ServeResponses.error(.badRequest, "cursor \(text) is not one this server made: follow the Link rel=\"next\" of a page")
                }
                guard cursor.fingerprint == fingerprint else {
                    return ServeResponses.error(
                        .badRequest, "this cursor was made for another query: send it with the entity, predicate and sort of the page it came from")
                }
                offset = cursor.offset
            }
            if limit == 0 { return ServeResponses.json(Data("[]".utf8)) }
            // One more than the page: whether there is a next page, without a count.
            fetch.fetchLimit = limit + 1
            fetch.fetchOffset = offset
            let (request, stack, pageSize) = (fetch, self.stack, limit)
            // On the read pool: the fetch, and each object's JSON (which may fire faults).
            let page = try await reads.read { () throws -> Result<(json: Data, more: Bool), AmbarError> in
                let context = try stack.temporaryContext()
                let outcome: Result<[[String: Any]], AmbarError> = context.performAndWait {
                    Result { () throws(AmbarError) in try context.fetch(request).map { object throws(AmbarError) in try ObjectJSON.fields(object) } }
                }
                switch outcome {
                case .success(let objects):
                    let json = try JSONSerialization.data(withJSONObject: Array(objects.prefix(pageSize)), options: [.sortedKeys, .withoutEscapingSlashes])
                    return .success((json, objects.count > pageSize))
                case .failure(let error):
                    return .failure(error)
                }
            }
            switch page {
            case .success(let page):
                var response = ServeResponses.json(page.json)
                if page.more {
                    let next = ObjectsCursor(offset: offset + limit, fingerprint: fingerprint)
                    response.headers[Self.linkHeader] = "<\(Self.link(uri, cursor: next))>; rel=\"next\""
                }
                return response
            case .failure(let error) where FetchCommand.isAboutTheRequest(error):
                return ServeResponses.error(.badRequest, "\(error)")
            case .failure(let error):
                return ServeResponses.error(.internalServerError, "\(error)")
            }
        }

        /// The request's path and query with `cursor` set to `cursor` (every other parameter as
        /// the client sent it).
        static func link(_ uri: HummingbirdCore.URI, cursor: ObjectsCursor) -> String {
            let kept = (uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("cursor=") && $0 != "cursor" }
            return uri.path + "?" + (kept + ["cursor=\(cursor.text)"[...]]).joined(separator: "&")
        }
    }
#endif
