import Foundation

/// What an object made outside a context (``ManagedObject/init()``) holds until it is inserted:
/// its relationships, as the objects themselves (by relationship index in its class's own
/// layout), and why it cannot be inserted when it cannot.
final class DetachedState {
    /// Why the object cannot be inserted (its class does not declare its entity, or the
    /// declaration does not make one); `nil` when it can.
    let problem: AmbarError?
    /// To-one destinations set while detached.
    var toOne: [Int: ManagedObject] = [:]
    /// To-many destinations added while detached, in the order added (the order of an ordered
    /// relationship).
    var toMany: [Int: [ManagedObject]] = [:]

    init(problem: AmbarError?) {
        self.problem = problem
    }

    func setToOne(_ destination: ManagedObject?, at index: Int) {
        toOne[index] = destination
    }

    func add(_ destination: ManagedObject, at index: Int) {
        var list = toMany[index] ?? []
        if !list.contains(where: { $0 === destination }) { list.append(destination) }
        toMany[index] = list
    }

    func remove(_ destination: ManagedObject, at index: Int) {
        toMany[index]?.removeAll { $0 === destination }
    }

    func insert(_ destination: ManagedObject, at position: Int, in index: Int, name: String) throws(AmbarError) {
        var list = (toMany[index] ?? []).filter { $0 !== destination }
        guard position >= 0, position <= list.count else {
            throw .invalidFetchRequest("position \(position) is outside '\(name)' (0…\(list.count))")
        }
        list.insert(destination, at: position)
        toMany[index] = list
    }

    /// Every object this one's relationships lead to.
    var destinations: [ManagedObject] { Array(toOne.values) + toMany.values.flatMap { $0 } }
}

/// The layout an object made outside a context uses until it is inserted: its class's entity
/// as the class declares it (in a model of the classes it declares relationships to), built once
/// per class.
enum DetachedLayouts {
    private static let cache = Locked<[ObjectIdentifier: (layout: EntityLayout, problem: AmbarError?)]>([:])

    static func layout(for type: ManagedObject.Type) -> (layout: EntityLayout, problem: AmbarError?) {
        let key = ObjectIdentifier(type)
        if let known = cache.withLock({ $0[key] }) { return known }
        let made = make(type)
        cache.withLock { $0[key] = made }
        return made
    }

    private static func make(_ type: ManagedObject.Type) -> (layout: EntityLayout, problem: AmbarError?) {
        let name = type.entityName
        guard let declared = type as? any DeclaredModel.Type else {
            return (
                placeholder(name, type),
                .invalidModel(
                    "\(type) does not declare its entity (@Model), so an object made with \(type)() cannot be inserted; make it with context.insert(\(type).self)"
                )
            )
        }
        do throws(AmbarError) {
            let model = try ManagedObjectModel(declaring: [declared])
            guard let layout = model.resolved.entities[name] else {
                return (placeholder(name, type), .invalidModel("the declaration of \(type) makes no entity named '\(name)'"))
            }
            return (layout, nil)
        } catch {
            return (placeholder(name, type), error)
        }
    }

    /// An entity without properties: what an object that cannot be inserted holds meanwhile
    /// (its properties report that they are unknown).
    private static func placeholder(_ name: String, _ type: ManagedObject.Type) -> EntityLayout {
        EntityLayout(
            name: name, description: EntityDescription(name, properties: []), rootName: name, attributes: [], relationships: [],
            selfAndDescendants: [name], uniquenessConstraints: [], ancestors: [], objectClass: type,
            attributeColumns: [], relationshipColumns: [], derivedAttributes: [], fetchedProperties: [])
    }
}
