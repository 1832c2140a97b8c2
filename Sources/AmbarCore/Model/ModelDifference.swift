import Foundation

/// What separates two versions of a model, for lightweight migration: whether a store made with
/// `old` can be brought to `new` in place, without touching its data.
///
/// Lightweight (additive) changes: new entities; new attributes that are optional or have a
/// default; new optional to-one and any new to-many relationships; attributes becoming optional;
/// indexes added or removed; new uniqueness constraints (the store checks its rows first, and
/// refuses when some share the constrained values: remove the duplicates with the old model
/// first); defaults and delete rules changed; entities, attributes and relationships renamed,
/// with the new element's `renamingIdentifier` naming the old one. Everything else — a removed
/// or retyped element, a new required attribute without a default, a removed uniqueness
/// constraint, a changed parent, destination or inverse — is refused with a reason per element.
public enum ModelDifference {
    /// The reasons `old` cannot be migrated to `new` in place; empty when it can.
    public static func lightweightProblems(from stored: ManagedObjectModel, to new: ManagedObjectModel) -> [String] {
        plan(from: stored, to: new).problems
    }

    /// A lightweight migration worked out: the renames, the stored model under the new names
    /// (`nil` when the renames cannot be honoured), and what stands in the way (empty when
    /// nothing does). The store migrates from exactly what was checked.
    package struct Plan {
        package let renaming: ModelRenaming
        let renamed: ManagedObjectModel?
        let problems: [String]
    }

    /// The lightweight migration of a store that keeps `storedJSON` (its model) under
    /// `storeHash` to `model`: the plan and the stored model under the new names; or the error
    /// that refuses it (a store already newer than `model` says so), for every backend alike.
    package static func migration(storedJSON: String?, storeHash: String, to model: ManagedObjectModel) throws(AmbarError) -> (
        plan: Plan, stored: ManagedObjectModel, renamed: ManagedObjectModel
    ) {
        // try?: a stored model this code cannot read was written by a newer one: incompatible, by both hashes
        guard let storedJSON, let stored = try? JSONDecoder().decode(ManagedObjectModel.self, from: Data(storedJSON.utf8)) else {
            throw .incompatibleModel(storeHash: storeHash, modelHash: model.versionHash)
        }
        let plan = plan(from: stored, to: model)
        guard plan.problems.isEmpty, let renamed = plan.renamed else {
            if lightweightProblems(from: model, to: stored).isEmpty {
                throw .storeMigrated(storeHash: storeHash, modelHash: model.versionHash)
            }
            throw .migrationRefused(reasons: plan.problems)
        }
        return (plan, stored, renamed)
    }

    static func plan(from stored: ManagedObjectModel, to new: ManagedObjectModel) -> Plan {
        let renaming = ModelRenaming(from: stored, to: new)
        guard renaming.problems.isEmpty else { return Plan(renaming: renaming, renamed: nil, problems: renaming.problems) }
        do {
            let renamed = try renaming.apply(to: stored)
            return Plan(renaming: renaming, renamed: renamed, problems: problems(from: renamed, to: new))
        } catch {
            if case .migrationRefused(let reasons) = error { return Plan(renaming: renaming, renamed: nil, problems: reasons) }
            return Plan(renaming: renaming, renamed: nil, problems: ["\(error)"])
        }
    }

    /// The non-lightweight differences between `old` (already under the new names) and `new`.
    private static func problems(from old: ManagedObjectModel, to new: ManagedObjectModel) -> [String] {
        var problems: [String] = []
        // Transient properties are not in the store: adding, removing or changing them needs
        // no migration.
        func stored(_ entity: EntityDescription) -> EntityDescription {
            var entity = entity
            entity.attributes.removeAll(where: \.isTransient)
            entity.relationships.removeAll(where: \.isTransient)
            return entity
        }
        for before in old.entities.map(stored) {
            guard let after = new.entities.first(where: { $0.name == before.name }).map(stored) else {
                problems.append("entity \(before.name) was removed")
                continue
            }
            let name = before.name
            if before.parent != after.parent {
                problems.append("entity \(name) changed its parent from \(before.parent ?? "none") to \(after.parent ?? "none")")
            }
            // New constraints are checked against the rows by the store; removed ones are refused.
            let kept = Set(after.uniquenessConstraints.map(Set.init))
            for group in before.uniquenessConstraints where !kept.contains(Set(group)) {
                problems.append("entity \(name) dropped its uniqueness constraint on \(group.joined(separator: ", "))")
            }
            for attribute in before.attributes {
                guard let now = after.attributes.first(where: { $0.name == attribute.name }) else {
                    problems.append("attribute \(name).\(attribute.name) was removed")
                    continue
                }
                if now.type != attribute.type {
                    problems.append("attribute \(name).\(attribute.name) changed type from \(attribute.type.rawValue) to \(now.type.rawValue)")
                }
                if attribute.isOptional && !now.isOptional {
                    problems.append("attribute \(name).\(attribute.name) became required (existing rows may have no value)")
                }
            }
            for attribute in after.attributes where !before.attributes.contains(where: { $0.name == attribute.name }) {
                if !attribute.isOptional && attribute.defaultValue.isNull {
                    problems.append("new attribute \(name).\(attribute.name) is required and has no default (existing rows would have no value)")
                }
            }
            for relationship in before.relationships {
                guard let now = after.relationships.first(where: { $0.name == relationship.name }) else {
                    problems.append("relationship \(name).\(relationship.name) was removed")
                    continue
                }
                if now.destination != relationship.destination || now.isToMany != relationship.isToMany || now.inverse != relationship.inverse {
                    problems.append("relationship \(name).\(relationship.name) changed its destination, cardinality or inverse")
                }
                if relationship.isOptional && !now.isOptional {
                    problems.append("relationship \(name).\(relationship.name) became required (existing rows may have none)")
                }
            }
            for relationship in after.relationships where !before.relationships.contains(where: { $0.name == relationship.name }) {
                if !relationship.isToMany && !relationship.isOptional {
                    problems.append("new relationship \(name).\(relationship.name) is required (existing rows would have none)")
                }
            }
        }
        return problems
    }
}
