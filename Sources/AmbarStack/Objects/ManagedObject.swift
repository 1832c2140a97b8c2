import Foundation

/// The opaque token a context passes to ``ManagedObject/init(_:)``. Only contexts make objects.
public struct ManagedObjectInitToken {
    let layout: EntityLayout
    let objectID: ManagedObjectID
    let context: ManagedObjectContext
    /// A row to load as the object's committed state (a fetch), so the object is made with its
    /// values rather than with placeholders replaced at once.
    var row: StoreRow? = nil
}

/// An object of the graph: one row of an entity, owned by exactly one context and confined to
/// that context's queue.
///
/// Subclass it to get typed properties, each declared in one line:
///
/// ```swift
/// final class Employee: ManagedObject {
///     @Managed("name") var name: String
///     @Managed("salary") var salary: Double
///     @ToOne("department") var department: Department?
/// }
/// ```
///
/// or use the by-name accessors (``value(forKey:)``, ``setValue(_:forKey:)-(AttributeValue,_)``). Objects are not
/// `Sendable`: pass their ``objectID`` between queues and get the other context's instance with
/// ``ManagedObjectContext/object(with:)``.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The entity this class stands for; by default the class name.
    open class var entityName: String { ClassNames.name(of: self) }

    /// The object's identity; temporary until the object is saved.
    public internal(set) final var objectID: ManagedObjectID
    /// The context that owns the object; `nil` once the object is deleted and saved, or its
    /// context is reset or gone.
    public internal(set) weak var managedObjectContext: ManagedObjectContext?
    /// The entity's layout in the owning context's model (for an object made outside a context,
    /// in its class's own declaration until it is inserted). Written only then, on the object's
    /// queue, so the exclusivity checks of every read are not needed.
    @exclusivity(unchecked) final var layout: EntityLayout

    // Values, in the layout's attribute order; `snapshot` holds the committed ones.
    final var values: [AttributeValue]
    final var snapshot: [AttributeValue]
    /// The row version the snapshot was read at (0 for a new object).
    final var version: Int64 = 0
    final var toOne: [ManagedObjectID?]
    final var snapshotToOne: [ManagedObjectID?]
    /// To-many destinations; `nil` while the relationship is a fault.
    final var toMany: [Set<ManagedObjectID>?]
    final var snapshotToMany: [Set<ManagedObjectID>?]
    /// The destinations of loaded ordered relationships, in order (by relationship index); the
    /// same objects as `toMany` holds for that index.
    final var order: [Int: [ManagedObjectID]] = [:]
    final var snapshotOrder: [Int: [ManagedObjectID]] = [:]
    final var changedAttributes = PropertyIndexSet()
    final var changedRelationships = PropertyIndexSet()
    /// Whether values have been loaded (false for a fault that has not fired).
    final var hasData = false
    final var faultFlag = true
    final var lifecycle = Lifecycle.registered
    /// Whether an objects-did-change notification has announced this (inserted) object.
    final var insertAnnounced = false
    /// Faults fetched together, loaded together (fetch batch size).
    final var faultBatch: FaultBatch?
    /// The pass of a results controller that marked this object as touched by a change (see
    /// ``ContextState/nextResultsPass()``); compared with the pass's number, never reset.
    final var resultsPass: UInt64 = 0
    /// For an object made outside a context (``init()``): its relationships, and why it cannot
    /// be inserted if it cannot; `nil` otherwise.
    final var detached: DetachedState?

    /// `detached`: made with ``init()`` and not inserted yet.
    enum Lifecycle { case detached, registered, inserted, deleted, invalidated }

    /// Made by contexts only; do not call or override.
    public required init(_ token: ManagedObjectInitToken) {
        self.layout = token.layout
        self.objectID = token.objectID
        self.managedObjectContext = token.context
        if let row = token.row {
            self.values = row.values
            self.snapshot = row.values
            self.version = row.version
            self.hasData = true
            self.toOne = row.toOne.isEmpty ? token.layout.noDestinations : row.toOne
        } else {
            self.values = token.layout.nullValues
            self.snapshot = []
            self.toOne = token.layout.noDestinations
        }
        self.snapshotToOne = toOne
        self.toMany = token.layout.unloadedToMany
        self.snapshotToMany = toMany
    }

    /// Makes an object outside any context, of a class that declares its entity (`@Model`):
    /// set its properties, then insert it with ``ManagedObjectContext/insert(_:)-(ManagedObject)``
    /// (as in SwiftData), or let a context make it with ``ManagedObjectContext/insert(_:)-(T.Type)``
    /// (as in Core Data).
    ///
    /// A class with an initializer of its own calls this one first, then sets its properties:
    ///
    /// ```swift
    /// @Model final class Project: ManagedObject {
    ///     @Attribute(.unique) var name: String
    ///
    ///     init(name: String) {
    ///         super.init()
    ///         self.name = name
    ///     }
    /// }
    ///
    /// let project = Project(name: "Home")
    /// try context.insert(project)
    /// ```
    ///
    /// Until it is inserted the object holds its values and relationships itself, starting from
    /// the declared defaults; inverses are set, and related objects made outside a context are
    /// inserted with it, when it is inserted. An object of a class that does not declare its
    /// entity can be made this way but not inserted: the insert throws and says so.
    public init() {
        let made = DetachedLayouts.layout(for: Self.self)
        self.layout = made.layout
        self.objectID = ManagedObjectID.makeTemporary(entityName: made.layout.name)
        self.values = made.layout.insertValues
        self.snapshot = []
        self.toOne = made.layout.noDestinations
        self.snapshotToOne = made.layout.noDestinations
        self.toMany = made.layout.unloadedToMany
        self.snapshotToMany = made.layout.unloadedToMany
        self.hasData = true
        self.faultFlag = false
        self.lifecycle = .detached
        self.detached = DetachedState(problem: made.problem)
    }

    /// Called once when the object is inserted, after defaults are set (for an object made with
    /// ``init()``, before the values it was given are applied). Override to set up initial
    /// values; call `super`.
    open func awakeFromInsert() {}

    // MARK: - State

    /// The name of the object's entity.
    public var entityName: String { layout.name }
    /// The object's entity description, with inherited properties.
    public var entity: EntityDescription { layout.description }
    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { lifecycle == .inserted }
    /// Whether the object was deleted and the deletion not yet saved.
    public var isDeleted: Bool { lifecycle == .deleted }
    /// Whether the object has unsaved changes to its properties (and is not inserted or deleted).
    public var isUpdated: Bool {
        lifecycle == .registered && (!changedAttributes.isEmpty || !changedRelationships.isEmpty)
    }
    /// Whether the object is a fault: its values are not in memory yet, and will be loaded on
    /// first access.
    public var isFault: Bool { faultFlag }
    /// Whether the object is inserted, deleted or updated.
    public var hasChanges: Bool { lifecycle == .inserted || lifecycle == .deleted || isUpdated }

    /// The attributes (and to-one relationships, as object-ID URIs) changed since the last save.
    public func changedValues() -> [String: AttributeValue] {
        fireFaultIfNeeded()
        var result: [String: AttributeValue] = [:]
        for i in changedAttributes { result[layout.attributes[i].name] = values[i] }
        for i in changedRelationships where !layout.relationships[i].isToMany {
            result[layout.relationships[i].name] = toOne[i].map { .string($0.uriString) } ?? .null
        }
        return result
    }

    /// The names of the relationships changed since the last save.
    public var changedRelationshipNames: Set<String> {
        Set(changedRelationships.map { layout.relationships[$0].name })
    }

    /// The committed (last saved or fetched) values of the given attributes; all when `keys` is nil.
    public func committedValues(forKeys keys: [String]? = nil) -> [String: AttributeValue] {
        fireFaultIfNeeded()
        var result: [String: AttributeValue] = [:]
        let names = keys ?? layout.attributes.map(\.name)
        for name in names {
            guard let i = layout.attributeIndex[name] else { continue }
            result[name] = snapshot.isEmpty ? .null : snapshot[i]
        }
        return result
    }

    // MARK: - By-name access

    /// The value of the attribute named `key`.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)`` when the entity has no such attribute.
    public func value(forKey key: String) throws(AmbarError) -> AttributeValue {
        guard let i = layout.attributeSlot(key) else {
            throw .unknownProperty(entity: layout.name, property: key)
        }
        return attribute(at: i)
    }

    /// Sets the attribute named `key`.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``, or
    ///   ``AmbarError/typeMismatch(entity:property:expected:got:)`` when the value does not fit.
    public func setValue(_ value: AttributeValue, forKey key: String) throws(AmbarError) {
        guard let i = layout.attributeSlot(key) else {
            throw .unknownProperty(entity: layout.name, property: key)
        }
        try setAttribute(value, at: i)
    }

    /// Sets the attribute named `key` from any storable Swift value.
    public func setValue(_ value: some AttributeValueConvertible, forKey key: String) throws(AmbarError) {
        try setValue(value.attributeValue, forKey: key)
    }

    /// The destination of the to-one relationship named `key`.
    public func object(forKey key: String) throws(AmbarError) -> ManagedObject? {
        let rel = try relationship(key, toMany: false)
        return destination(at: rel.index)
    }

    /// Sets the to-one relationship named `key`, keeping its inverse in step.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: false)
        try setDestination(object, at: rel.index)
    }

    /// The destinations of the to-many relationship named `key`.
    public func objects(forKey key: String) throws(AmbarError) -> Set<ManagedObject> {
        let rel = try relationship(key, toMany: true)
        return destinations(at: rel.index)
    }

    /// Adds `object` to the to-many relationship named `key`, keeping its inverse in step.
    public func addObject(_ object: ManagedObject, toKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: true)
        try insertDestination(object, at: rel.index)
    }

    /// Removes `object` from the to-many relationship named `key`, keeping its inverse in step.
    public func removeObject(_ object: ManagedObject, fromKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: true)
        try removeDestination(object, at: rel.index)
    }

    /// Replaces the destinations of the to-many relationship named `key`.
    public func setObjects(_ objects: Set<ManagedObject>, forKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: true)
        let current = destinations(at: rel.index)
        for old in current.subtracting(objects) { try removeDestination(old, at: rel.index) }
        for new in objects.subtracting(current) { try insertDestination(new, at: rel.index) }
    }

    func relationship(_ key: String, toMany: Bool) throws(AmbarError) -> ResolvedRelationship {
        guard let i = layout.relationshipIndex[key] else {
            throw .unknownProperty(entity: layout.name, property: key)
        }
        let rel = layout.relationships[i]
        guard rel.isToMany == toMany else {
            throw .invalidPredicate("'\(layout.name).\(key)' is a to-\(rel.isToMany ? "many" : "one") relationship")
        }
        return rel
    }

    // MARK: - Slots

    func attribute(at i: Int) -> AttributeValue {
        fireFaultIfNeeded()
        return values[i]
    }

    func setAttribute(_ value: AttributeValue, at i: Int) throws(AmbarError) {
        let description = layout.attributes[i]
        guard let coerced = value.coerced(to: description.type) else {
            throw .typeMismatch(entity: layout.name, property: description.name, expected: description.type, got: value.kindName)
        }
        guard let context = managedObjectContext, lifecycle != .invalidated else {
            guard lifecycle == .detached else { throw .foreignObject(objectID, operation: "setting \(layout.name).\(description.name)") }
            values[i] = coerced
            changedAttributes.insert(i)
            return
        }
        guard context.isOnQueue else {
            throw .wrongQueue(context: context.displayName, operation: "setting \(layout.name).\(description.name)")
        }
        if faultFlag { fireFaultIfNeeded() }
        if values[i] == coerced { return }
        values[i] = coerced
        changedAttributes.insert(i)
        context.objectDidChange(self)
    }

    func destination(at i: Int) -> ManagedObject? {
        fireFaultIfNeeded()
        guard let id = toOne[i], let context = managedObjectContext else { return detached?.toOne[i] }
        return context.registeredOrFault(for: id)
    }

    func destinations(at i: Int) -> Set<ManagedObject> {
        guard let context = managedObjectContext else { return Set(detached?.toMany[i] ?? []) }
        let ids = context.loadToMany(self, i)
        return Set(ids.compactMap { context.registeredOrFault(for: $0) })
    }

    func destinationIDs(at i: Int) -> Set<ManagedObjectID> {
        guard let context = managedObjectContext else { return [] }
        return context.loadToMany(self, i)
    }

    func setDestination(_ object: ManagedObject?, at i: Int) throws(AmbarError) {
        guard let context = managedObjectContext else {
            guard lifecycle == .detached, let detached else { throw .foreignObject(objectID, operation: "setting a relationship") }
            return detached.setToOne(object, at: i)
        }
        try checkMutable("setting \(layout.name).\(layout.relationships[i].name)")
        try context.setToOne(self, i, object)
    }

    func insertDestination(_ object: ManagedObject, at i: Int) throws(AmbarError) {
        guard let context = managedObjectContext else {
            guard lifecycle == .detached, let detached else { throw .foreignObject(objectID, operation: "changing a relationship") }
            return detached.add(object, at: i)
        }
        try checkMutable("changing \(layout.name).\(layout.relationships[i].name)")
        try context.addToMany(self, i, object)
    }

    func removeDestination(_ object: ManagedObject, at i: Int) throws(AmbarError) {
        guard let context = managedObjectContext else {
            guard lifecycle == .detached, let detached else { throw .foreignObject(objectID, operation: "changing a relationship") }
            return detached.remove(object, at: i)
        }
        try checkMutable("changing \(layout.name).\(layout.relationships[i].name)")
        try context.removeFromToMany(self, i, object)
    }

    func checkMutable(_ operation: @autoclosure () -> String) throws(AmbarError) {
        _ = try mutableContext(operation())
    }

    /// The owning context, when the caller may change the object: it has one, is not
    /// invalidated, and the caller is on the context's queue.
    @inline(__always)
    func mutableContext(_ operation: @autoclosure () -> String) throws(AmbarError) -> ManagedObjectContext {
        guard let context = managedObjectContext, lifecycle != .invalidated else {
            throw .foreignObject(objectID, operation: operation())
        }
        guard context.isOnQueue else {
            throw .wrongQueue(context: context.displayName, operation: operation())
        }
        return context
    }

    func fireFaultIfNeeded() {
        if faultFlag {
            managedObjectContext?.checkQueue(for: self)
            if !hasData {
                managedObjectContext?.fulfillFault(self)
            }
            faultFlag = !hasData
        }
    }

    // MARK: - Loading

    /// Fills the object from a row read from the store (or a parent), as committed values.
    func load(values: [AttributeValue], toOne: [ManagedObjectID?], version: Int64) {
        self.values = values
        self.snapshot = values
        if !toOne.isEmpty {
            self.toOne = toOne
            self.snapshotToOne = toOne
        }
        self.version = version
        self.hasData = true
        self.changedAttributes.removeAll()
        self.changedRelationships.removeAll()
    }

    /// Fills the object from a state read from the store or a parent context.
    func apply(_ state: ObjectState) {
        load(values: state.values, toOne: state.toOne, version: state.version)
        for (i, set) in state.toMany.enumerated() where set != nil && i < toMany.count {
            toMany[i] = set
            snapshotToMany[i] = set
            if let list = state.order[i] {
                order[i] = list
                snapshotOrder[i] = list
            }
        }
    }

    /// Makes the object a fault again, dropping values and unsaved changes.
    func turnIntoFault() {
        hasData = false
        faultFlag = true
        changedAttributes.removeAll()
        changedRelationships.removeAll()
        for i in toMany.indices {
            toMany[i] = nil
            snapshotToMany[i] = nil
        }
        order.removeAll()
        snapshotOrder.removeAll()
    }

    /// Forgets the loaded to-many relationships (they load again on next use).
    func dropLoadedToMany() {
        for i in toMany.indices {
            toMany[i] = nil
            snapshotToMany[i] = nil
        }
        order.removeAll()
        snapshotOrder.removeAll()
    }

    /// Marks the current state as committed.
    func commit(version: Int64) {
        snapshot = values
        snapshotToOne = toOne
        snapshotToMany = toMany
        snapshotOrder = order
        self.version = version
        changedAttributes.removeAll()
        changedRelationships.removeAll()
    }

    // MARK: - Hashable, description

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The entity, the ID and the state, without firing a fault.
    public var description: String {
        var state: [String] = []
        if isFault { state.append("fault") }
        if isInserted { state.append("inserted") }
        if isDeleted { state.append("deleted") }
        if isUpdated { state.append("updated") }
        return "<\(layout.name) \(objectID.uriString)\(state.isEmpty ? "" : " " + state.joined(separator: ","))>"
    }
}

/// Class names, computed once per class: `String(describing:)` on a metatype costs about a
/// microsecond, and ``ManagedObject/entityName`` is read on every typed insert and fetch.
enum ClassNames {
    private static let cache = Locked<[ObjectIdentifier: String]>([:])

    static func name(of type: AnyClass) -> String {
        let key = ObjectIdentifier(type)
        if let name = cache.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        cache.withLock { $0[key] = name }
        return name
    }
}
