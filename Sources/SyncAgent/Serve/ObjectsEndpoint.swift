// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import Foundation
    import Hummingbird

    /// `GET /v1/objects/ENTITY?predicate=FORMAT&sort=KEY[:desc]&limit=N`: the matching objects as a
    /// JSON array, each as `fetch --json` prints it. `sort` repeats or takes a comma-separated list. A
    /// bad format is a 400 with `error` and `position`; an unknown entity a 404.
    struct ObjectsEndpoint: Sendable {
        let stack: DataStack

        func response(_ request: Request, context: ServeContext) throws -> Response {
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
            fetch.sortDescriptors = FetchCommand.sortDescriptors(query.all("sort").flatMap { $0.split(separator: ",").map(String.init) })
            if let text = query["limit"] {
                guard let limit = Int(text), limit >= 0 else { return ServeResponses.error(.badRequest, "limit takes a whole number, 0 or more, not \(text)") }
                fetch.fetchLimit = limit
            }
            let context = try stack.temporaryContext()
            let request = fetch
            let outcome: Result<[[String: Any]], AmbarError> = context.performAndWait {
                Result { () throws(AmbarError) in try context.fetch(request).map { object throws(AmbarError) in try ObjectJSON.fields(object) } }
            }
            switch outcome {
            case .success(let objects):
                return ServeResponses.json(try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes]))
            case .failure(let error) where FetchCommand.isAboutTheRequest(error):
                return ServeResponses.error(.badRequest, "\(error)")
            case .failure(let error):
                return ServeResponses.error(.internalServerError, "\(error)")
            }
        }
    }
#endif
