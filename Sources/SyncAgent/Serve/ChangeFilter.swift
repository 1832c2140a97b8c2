// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import Foundation

    /// What a filtered change stream follows: one or more entities (with their sub-entities, as
    /// `fetch` counts them), each with an optional `where` predicate, from
    /// `?entity=E[&where=FORMAT][&entity=F[&where=FORMAT]]…` — each `where` belongs to the
    /// `entity` before it.
    ///
    /// A `where` may read only the object's own values: its attributes, its to-one relationships
    /// (`owner == %@`) and its ID. A change to another object does not touch this one in the
    /// ledger, so a predicate through a relationship (`owner.name == 'x'`, `ANY items.price > 2`,
    /// `items.@count > 1`, `SUBQUERY`) could stop holding without any event saying so; it is
    /// refused rather than followed wrongly.
    struct ChangeFilter: Sendable {
        /// One entity and what its objects must satisfy (nil: every object of it).
        struct Clause: Sendable {
            let entity: String
            let predicate: ObjectPredicate?
        }

        let clauses: [Clause]
        /// The query's `entity` and `where` parameters as given, in order: streams with the same
        /// key follow the same filter, and are sent the same events, made once.
        let key: String

        /// Why a query's filter cannot be followed, with the position in the `where` format it
        /// concerns when there is one.
        struct Problem: Error {
            let message: String
            var position: Int?
        }

        /// The filter of a query, nil when it names no entity (an unfiltered stream).
        ///
        /// - Throws: ``Problem`` for a `where` without an entity before it, an entity named twice
        ///   or not in `model`, and a `where` that does not parse or reads other objects.
        static func parse(_ query: QueryParameters, model: ManagedObjectModel) throws(Problem) -> ChangeFilter? {
            var clauses: [(entity: String, format: String?)] = []
            for (name, value) in query.pairs {
                switch name {
                case "entity":
                    guard !clauses.contains(where: { $0.entity == value }) else {
                        throw Problem(message: "entity=\(value) is named twice: give it once, with one where (join conditions with AND or OR)")
                    }
                    guard model.entity(named: value) != nil else {
                        throw Problem(message: "the store has no entity named '\(value)' (it has: \(model.entityNames.sorted().joined(separator: ", ")))")
                    }
                    clauses.append((value, nil))
                case "where":
                    guard let last = clauses.last else {
                        throw Problem(message: "where=\(value) comes before any entity=: each where follows the entity it filters")
                    }
                    guard last.format == nil else { throw Problem(message: "entity=\(last.entity) has two where=: join them with AND in one") }
                    clauses[clauses.count - 1].format = value
                default:
                    continue
                }
            }
            guard !clauses.isEmpty else { return nil }
            var parsed: [Clause] = []
            for clause in clauses {
                guard let format = clause.format else {
                    parsed.append(Clause(entity: clause.entity, predicate: nil))
                    continue
                }
                let predicate: ObjectPredicate
                do throws(AmbarError) {
                    predicate = try ObjectPredicate(format: format)
                } catch {
                    if case .invalidPredicateFormat(_, let position, _) = error { throw Problem(message: "\(error)", position: position) }
                    throw Problem(message: "\(error)")
                }
                if let key = Self.keyThroughRelationship(in: predicate) {
                    throw Problem(
                        message:
                            "where=\(format) reads '\(key)', through a relationship: a stream's where may read only the \(clause.entity)'s own values (its attributes, to-one relationships compared with an object, its ID), because a change to another object sends no event for this one; follow that entity too, or filter on a value of \(clause.entity) itself"
                    )
                }
                parsed.append(Clause(entity: clause.entity, predicate: predicate))
            }
            let key = clauses.map { $0.entity + "\u{1F}" + ($0.format ?? "") }.joined(separator: "\u{1E}")
            return ChangeFilter(clauses: parsed, key: key)
        }

        /// The clause whose entity `entityName` is or inherits from (the first named), nil when
        /// the filter does not follow it.
        func clause(for entityName: String, in model: ManagedObjectModel) -> Clause? {
            clauses.first { model.entity(named: entityName, isKindOf: $0.entity) }
        }

        /// The first key of `predicate` that reads another object, nil when it reads only the
        /// object's own values.
        static func keyThroughRelationship(in predicate: ObjectPredicate) -> String? {
            func own(_ key: String) -> String? { key.contains(".") ? key : nil }
            func own(_ expression: ObjectExpression) -> String? {
                switch expression {
                case .key(let key): return own(key)
                case .count(let key), .aggregate(let key, _, _), .outer(let key, _): return key
                }
            }
            switch predicate {
            case .constant, .objectIn:
                return nil
            case .comparison(let key, _, _, _), .isIn(let key, _, _), .between(let key, _, _), .text(let key, _, _, _), .relationship(let key, _):
                return own(key)
            case .keyComparison(let lhs, _, let rhs, _):
                return own(lhs) ?? own(rhs)
            case .and(let parts), .or(let parts):
                return parts.lazy.compactMap(keyThroughRelationship).first
            case .not(let inner):
                return keyThroughRelationship(in: inner)
            case .any(let key, _), .count(let key, _, _), .aggregate(let key, _, _, _, _), .subquery(let key, _, _, _):
                return key
            case .quantified, .enclosing:
                return "a quantified key path (ANY, ALL, NONE, $outer)"
            }
        }
    }
#endif
