import AmbarCore
import Foundation

/// The columns of a root table and where each entity's properties sit in a SELECT of them.
package struct RowSpec: Sendable {
    /// Where one entity's properties sit in the SELECT. A class, so that a store reading many
    /// rows of one entity holds one reference to it, not a copy of its five arrays' references
    /// (retained and released at every row: a tenth of the store's own work per row).
    package final class EntityMap: Sendable {
        /// The entity's number in the store (`Z_ENT`).
        package let entityID: Int64
        package let layout: EntityLayout
        package let attributePositions: [Int32]
        /// What a transient attribute (position -1) starts as.
        package let attributeDefaults: [AttributeValue]
        package let attributeTypes: [AttributeType]
        /// (relationship index, column position, entity column position, declared destination's scope)
        package let toOne: [(Int, Int32, Int32?, Unmanaged<ObjectIDScope>)]
        /// The scope of this entity's IDs in the store.
        package let scope: Unmanaged<ObjectIDScope>

        init(
            entityID: Int64, layout: EntityLayout, attributePositions: [Int32], attributeDefaults: [AttributeValue],
            attributeTypes: [AttributeType], toOne: [(Int, Int32, Int32?, Unmanaged<ObjectIDScope>)], scope: Unmanaged<ObjectIDScope>
        ) {
            self.entityID = entityID
            self.layout = layout
            self.attributePositions = attributePositions
            self.attributeDefaults = attributeDefaults
            self.attributeTypes = attributeTypes
            self.toOne = toOne
            self.scope = scope
        }
    }
    /// The map of the entity of the row read last, kept across the rows of one statement so that
    /// each row's entity is looked up only when it changes. Unretained: the ``RowSpec`` that
    /// holds the map is alive for as long as its statement is read.
    package typealias LastEntity = Unmanaged<EntityMap>?

    let columns: [String]
    package let perEntity: [Int64: EntityMap]
    /// The SELECT list with the `t0` alias, built once.
    package let selectListT0: String
    /// How many columns the SELECT list has: the primary key, entity and version, then the
    /// table's own.
    package var columnCount: Int { 3 + columns.count }
    /// The most attributes an entity of the table has: how much room a row can take in a
    /// ``RowValueBlock``.
    package let widestRow: Int

    init(columns: [String], perEntity: [Int64: EntityMap]) {
        self.columns = columns
        self.perEntity = perEntity
        self.widestRow = perEntity.values.map(\.attributePositions.count).max() ?? 0
        self.selectListT0 = Self.makeSelectList(columns, "t0")
    }

    package func selectList(_ alias: String) -> String {
        alias == "t0" ? selectListT0 : Self.makeSelectList(columns, alias)
    }

    private static func makeSelectList(_ columns: [String], _ alias: String) -> String {
        (["Z_PK", "Z_ENT", "Z_OPT"] + columns.map(quoted)).map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// The specs of every root table of `model`.
    package static func specs(
        for resolved: ResolvedModel, entityIDs: [String: Int64], scopes: StoreScopes, location: String
    ) throws(AmbarError) -> [String: RowSpec] {
        var specs: [String: RowSpec] = [:]
        for root in resolved.roots {
            let columns = (resolved.rootColumns[root] ?? []).map(\.name)
            var position: [String: Int32] = [:]
            for (i, c) in columns.enumerated() { position[c] = Int32(i + 3) }
            var perEntity: [Int64: RowSpec.EntityMap] = [:]
            for name in resolved.entities[root]?.selfAndDescendants ?? [] {
                guard let layout = resolved.entities[name], let id = entityIDs[name] else {
                    throw .storeCannotOpen(path: location, reason: "entity '\(name)' has no number in ambar_entities")
                }
                let toOne = layout.relationships.filter { !$0.isToMany && layout.relationshipColumns[$0.index] != nil }.map { rel in
                    (
                        rel.index, position[layout.column(ofRelationship: rel.index)] ?? -1, rel.entityColumn.flatMap { position[$0] },
                        scopes.scope(rel.description.destination)
                    )
                }
                perEntity[id] = RowSpec.EntityMap(
                    entityID: id, layout: layout,
                    attributePositions: layout.attributeColumns.map { $0.flatMap { position[$0] } ?? -1 },
                    attributeDefaults: layout.attributes.map { $0.isTransient ? $0.defaultValue.coerced(to: $0.type) ?? .null : .null },
                    attributeTypes: layout.attributes.map(\.type),
                    toOne: toOne,
                    scope: scopes.scope(name))
            }
            specs[root] = RowSpec(columns: columns, perEntity: perEntity)
        }
        return specs
    }
}
