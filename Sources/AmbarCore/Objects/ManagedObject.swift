import Foundation

/// The opaque token a context passes to ``ManagedObject/init(_:)``. Only contexts make objects.
public struct ManagedObjectInitToken {
    let layout: EntityLayout
    let objectID: ManagedObjectID
    /// Unretained: a token lives only while its context makes the object.
    unowned(unsafe) let context: ManagedObjectContext
    /// A row's values to load as the object's committed state (a fetch), so the object is made
    /// with its values rather than with placeholders replaced at once; `nil` for a fault or a
    /// new object. The row's parts are held apart, not as an optional row, so that the object's
    /// initializer copies three plain fields instead of an optional struct through its value
    /// witnesses.
    let values: RowValues?
    let toOne: [ManagedObjectID?]
    let version: Int64

    init(layout: EntityLayout, objectID: ManagedObjectID, context: ManagedObjectContext) {
        self.layout = layout
        self.objectID = objectID
        self.context = context
        self.values = nil
        self.toOne = []
        self.version = 0
    }

    init(layout: EntityLayout, objectID: ManagedObjectID, context: ManagedObjectContext, row: consuming StoreRow) {
        self.layout = layout
        self.objectID = objectID
        self.context = context
        self.values = row.values
        self.toOne = row.toOne
        self.version = row.version
    }
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
    @exclusivity(unchecked) public private(set) final var objectID: ManagedObjectID
    /// The context that owns the object; `nil` once the object is deleted and saved, or its
    /// context is reset or gone.
    public var managedObjectContext: ManagedObjectContext? { contextLink?.context }
    /// The owning context's link (which holds the context weakly); `nil` for an object made
    /// outside a context and not inserted, and once the object left its context.
    @exclusivity(unchecked) final private var contextLink: ContextLink?
    /// The entity's layout in the owning context's model (for an object made outside a context,
    /// in its class's own declaration until it is inserted). Written only then, on the object's
    /// queue, so the exclusivity checks of every read are not needed.
    @exclusivity(unchecked) final private(set) var layout: EntityLayout

    // The object's state. Every stored property below is read and written only on the owning
    // context's queue (or, before insertion, by the one thread that made the object), and never
    // through overlapping accesses, so the run-time exclusivity checks are switched off: they
    // were an eighth of an import's time.
    // Values, in the layout's attribute order; `snapshot` holds the committed ones.
    @exclusivity(unchecked) final private(set) var values: RowValues
    @exclusivity(unchecked) final private(set) var snapshot: RowValues
    /// The row version the snapshot was read at (0 for a new object).
    @exclusivity(unchecked) final private(set) var version: Int64 = 0
    @exclusivity(unchecked) final private(set) var toOne: [ManagedObjectID?]
    @exclusivity(unchecked) final private(set) var snapshotToOne: [ManagedObjectID?]
    /// To-many destinations; `nil` while the relationship is a fault.
    @exclusivity(unchecked) final private(set) var toMany: [Set<ManagedObjectID>?]
    @exclusivity(unchecked) final private(set) var snapshotToMany: [Set<ManagedObjectID>?]
    /// The destinations of loaded ordered relationships, in order (by relationship index); the
    /// same objects as `toMany` holds for that index.
    @exclusivity(unchecked) final private(set) var order: [Int: [ManagedObjectID]] = Dictionary()
    /// The object that stands for this one in a layer above (a SwiftData model), held as long
    /// as this object is in its context (the context keeps both; leaving it lets both go); only
    /// touched on the context's queue.
    package final var companion: AnyObject?
    @exclusivity(unchecked) final private(set) var snapshotOrder: [Int: [ManagedObjectID]] = Dictionary()
    @exclusivity(unchecked) final private(set) var changedAttributes = PropertyIndexSet()
    @exclusivity(unchecked) final private(set) var changedRelationships = PropertyIndexSet()
    /// Whether values have been loaded (false for a fault that has not fired).
    @exclusivity(unchecked) final private(set) var hasData = false
    @exclusivity(unchecked) final private(set) var faultFlag = true
    @exclusivity(unchecked) final package private(set) var lifecycle = Lifecycle.registered
    /// Whether an objects-did-change notification has announced this (inserted) object.
    @exclusivity(unchecked) final private(set) var insertAnnounced = false
    /// Faults fetched together, loaded together (fetch batch size).
    @exclusivity(unchecked) final private(set) var faultBatch: FaultBatch?
    /// The pass of a results controller that marked this object as touched by a change (see
    /// ``ContextState/nextResultsPass()``); compared with the pass's number, never reset.
    @exclusivity(unchecked) final package private(set) var resultsPass: UInt64 = 0
    /// The context's ``ContextState/changeEpoch`` when this object last recorded a change there;
    /// only ``ContextState/recordUpdate(_:)`` reads and writes it.
    @exclusivity(unchecked) final var recordedChangeEpoch: UInt64 = 0
    /// For an object made outside a context (``init()``): its relationships, and why it cannot
    /// be inserted if it cannot; `nil` otherwise.
    @exclusivity(unchecked) final private(set) var detached: DetachedState?

    /// `detached`: made with ``init()`` and not inserted yet.
    package enum Lifecycle { case detached, registered, inserted, deleted, invalidated }

    /// Made by contexts only; do not call or override.
    public required init(_ token: ManagedObjectInitToken) {
        self.layout = token.layout
        self.objectID = token.objectID
        self.contextLink = token.context.link
        if let values = token.values {
            self.values = values
            self.snapshot = values
            self.version = token.version
            self.hasData = true
            self.toOne = token.toOne.isEmpty ? token.layout.noDestinations : token.toOne
        } else {
            self.values = RowValues(token.layout.nullValues)
            self.snapshot = .none
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
        self.objectID = ManagedObjectID.makeTemporary(for: made.layout)
        self.values = RowValues(made.layout.insertValues)
        self.snapshot = .none
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

    // MARK: - Slots

    func attribute(at i: Int) -> AttributeValue {
        fireFaultIfNeeded()
        return values[i]
    }

    func setAttribute(_ value: AttributeValue, at i: Int) throws(AmbarError) {
        // The attribute's description is read field by field where needed, not copied: a copy
        // retained and released its strings on every set (5% of an import).
        let type = layout.attributes[i].type
        guard let coerced = value.coerced(to: type) else {
            throw .typeMismatch(entity: layout.name, property: layout.attributes[i].name, expected: type, got: value.kindName)
        }
        // The context's existence and queue are read from its link, without loading the
        // context: only a change the context records (below) loads it, so a set on an insert
        // not announced yet (an importer's objects) never does.
        guard let link = contextLink, link.isOpen, lifecycle != .invalidated else {
            guard lifecycle == .detached else { throw .foreignObject(objectID, operation: "setting \(layout.name).\(layout.attributes[i].name)") }
            values[i] = coerced
            changedAttributes.insert(i)
            return
        }
        guard link.queue.isCurrent else {
            throw .wrongQueue(context: link.context?.displayName ?? "(gone)", operation: "setting \(layout.name).\(layout.attributes[i].name)")
        }
        if faultFlag { try fireFaultOrThrow() }
        if values[i] == coerced { return }
        values[i] = coerced
        changedAttributes.insert(i)
        // An insert not announced yet has nothing to record (its insert notification tells its
        // edits): its context is not loaded.
        if lifecycle == .inserted && !insertAnnounced { return }
        link.context?.objectDidChange(self)
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

    // Reads for operations that can throw (predicates evaluated in memory): a fault or a to-many
    // relationship that cannot be read throws instead of reading as empty.

    /// The attribute at `i`; a fault that cannot be filled throws.
    func readAttribute(at i: Int) throws(AmbarError) -> AttributeValue {
        try fireFaultOrThrow()
        return values[i]
    }

    /// The destination of the to-one relationship at `i`; a fault that cannot be filled throws.
    func readDestination(at i: Int) throws(AmbarError) -> ManagedObject? {
        try fireFaultOrThrow()
        guard let id = toOne[i], let context = managedObjectContext else { return detached?.toOne[i] }
        return context.registeredOrFault(for: id)
    }

    /// The destinations of the to-many relationship at `i`; a set that cannot be read throws.
    func readDestinations(at i: Int) throws(AmbarError) -> Set<ManagedObject> {
        guard let context = managedObjectContext else { return Set(detached?.toMany[i] ?? []) }
        return Set(try context.requireToMany(self, i).compactMap { context.registeredOrFault(for: $0) })
    }

    /// The IDs of the destinations of the to-many relationship at `i`; a set that cannot be
    /// read throws.
    func readDestinationIDs(at i: Int) throws(AmbarError) -> Set<ManagedObjectID> {
        guard let context = managedObjectContext else { return [] }
        return try context.requireToMany(self, i)
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

    /// Fills the fault for an operation that changes the object or depends on its values: a
    /// read that fails throws (the object stays a fault) instead of leaving it empty.
    func fireFaultOrThrow() throws(AmbarError) {
        guard faultFlag, let context = managedObjectContext else { return }
        context.checkQueue(for: self)
        if !hasData { try context.fillFault(self) }
        faultFlag = !hasData
    }

    // MARK: - State changes
    //
    // Every change a context makes to one of its objects goes through one of these methods; the
    // object's fields are written nowhere else (they are `private(set)`).

    /// Makes a new object of its context an inserted one: the entity's defaults, empty to-many
    /// relationships.
    func becomeInserted() {
        values = RowValues(layout.insertValues)
        for i in layout.toManyRelationships { toMany[i] = [] }
        hasData = true
        faultFlag = false
        lifecycle = .inserted
    }

    /// Makes an object made outside a context (``init()``) an inserted object of `context`, laid
    /// out as `layout` (its entity in the context's model). It starts over from the entity's
    /// defaults; the caller applies the values it was given (``setInitialValue(_:at:)``) after
    /// ``awakeFromInsert()``.
    func becomeInserted(into context: ManagedObjectContext, as layout: EntityLayout) {
        self.layout = layout
        contextLink = context.link
        snapshot = .none
        toOne = layout.noDestinations
        snapshotToOne = layout.noDestinations
        toMany = layout.unloadedToMany
        snapshotToMany = layout.unloadedToMany
        order = [:]
        snapshotOrder = [:]
        changedAttributes.removeAll()
        changedRelationships.removeAll()
        detached = nil
        becomeInserted()
    }

    /// Takes an object a child context inserted and saved as this context's own unsaved insert.
    func becomeInserted(from state: ObjectState) {
        values = state.values
        toOne = state.toOne
        toMany = state.toMany
        order = state.order
        snapshot = .none
        hasData = true
        faultFlag = false
        lifecycle = .inserted
    }

    /// Sets an attribute of a newly inserted object without recording a change (an insert saves
    /// every value).
    func setInitialValue(_ value: AttributeValue, at i: Int) {
        values[i] = value
    }

    /// Takes the properties a child context changed and saved (`attributes` and `relationships`,
    /// from its `state`) as this context's unsaved changes. A to-many relationship takes the
    /// child's set where it is loaded here; the caller loads the ones it needs first.
    func takeChanges(from state: ObjectState, attributes: [Int], relationships: [Int]) {
        for i in attributes where i < values.count {
            values[i] = state.values[i]
            changedAttributes.insert(i)
        }
        for i in relationships where i < toOne.count {
            if layout.relationships[i].isToMany {
                if let set = state.toMany[safe: i] ?? nil, toMany[i] != nil {
                    toMany[i] = set
                    if let list = state.order[i] { order[i] = list }
                }
            } else {
                toOne[i] = state.toOne[i]
            }
            changedRelationships.insert(i)
        }
    }

    /// Sets a derived attribute to its computed value, recording the change when it differs.
    func setDerivedValue(_ value: AttributeValue, at i: Int) {
        guard values[i] != value else { return }
        values[i] = value
        changedAttributes.insert(i)
    }

    /// Points the to-one relationship at `index` at `id` (no inverse handling). Whether it changed.
    func setDestinationID(_ id: ManagedObjectID?, at index: Int) -> Bool {
        guard toOne[index] != id else { return false }
        toOne[index] = id
        changedRelationships.insert(index)
        return true
    }

    /// Adds `id` to the to-many relationship at `index` where it is loaded, at the end of its order
    /// (no inverse handling); the relationship is recorded as changed either way.
    func addDestinationID(_ id: ManagedObjectID, at index: Int) {
        if toMany[index] != nil, toMany[index]?.insert(id).inserted == true {
            order[index]?.append(id)
        }
        changedRelationships.insert(index)
    }

    /// Removes `id` from the to-many relationship at `index` where it is loaded (no inverse
    /// handling); the relationship is recorded as changed either way.
    func removeDestinationID(_ id: ManagedObjectID, at index: Int) {
        if toMany[index] != nil, toMany[index]?.remove(id) != nil {
            order[index]?.removeAll { $0 == id }
        }
        changedRelationships.insert(index)
    }

    /// Sets the order of the loaded ordered relationship at `index`. Whether it changed.
    func setOrder(_ list: [ManagedObjectID], at index: Int) -> Bool {
        guard order[index] != list else { return false }
        order[index] = list
        changedRelationships.insert(index)
        return true
    }

    /// Forgets `id` in the loaded to-many relationship at `index`, committed state included: the
    /// object it stands for left the store.
    func forgetDestinationID(_ id: ManagedObjectID, at index: Int) {
        toMany[index]?.remove(id)
        snapshotToMany[index]?.remove(id)
        order[index]?.removeAll { $0 == id }
        snapshotOrder[index]?.removeAll { $0 == id }
    }

    /// Holds a to-many relationship read from the store: `current` with this context's unsaved
    /// changes, `base` as committed, and for an ordered one both orders.
    func setLoadedToMany(
        _ current: Set<ManagedObjectID>, base: Set<ManagedObjectID>, order list: [ManagedObjectID]?, baseOrder: [ManagedObjectID]?, at index: Int
    ) {
        toMany[index] = current
        snapshotToMany[index] = base
        if let list, let baseOrder {
            order[index] = list
            snapshotOrder[index] = baseOrder
        }
    }

    /// Makes the unloaded to-many relationships of a new object empty sets (it has no stored
    /// destinations to load).
    func loadEmptyToMany() {
        for i in toMany.indices where layout.relationships[i].isToMany && toMany[i] == nil {
            toMany[i] = []
        }
    }

    /// Replaces IDs that changed (temporary to permanent) in the object's relationships.
    func replaceIDs(_ map: [ManagedObjectID: ManagedObjectID]) {
        func replaced(_ set: Set<ManagedObjectID>?) -> Set<ManagedObjectID>? {
            guard let set, set.contains(where: { map[$0] != nil }) else { return set }
            return Set(set.map { map[$0] ?? $0 })
        }
        for i in toOne.indices {
            if let id = toOne[i], let new = map[id] { toOne[i] = new }
            if let id = snapshotToOne[i], let new = map[id] { snapshotToOne[i] = new }
            toMany[i] = replaced(toMany[i])
            snapshotToMany[i] = replaced(snapshotToMany[i])
        }
        for (i, list) in order where list.contains(where: { map[$0] != nil }) { order[i] = list.map { map[$0] ?? $0 } }
        for (i, list) in snapshotOrder where list.contains(where: { map[$0] != nil }) { snapshotOrder[i] = list.map { map[$0] ?? $0 } }
    }

    /// Takes the permanent ID the store gave the object when it was saved.
    func takePermanentID(_ id: ManagedObjectID) {
        objectID = id
    }

    /// Fills the object from a row read from the store (or a parent), as committed values.
    func load(values: RowValues, toOne: [ManagedObjectID?], version: Int64) {
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

    /// A fault whose row is gone (deleted elsewhere) reads as empty, as Core Data's inaccessible
    /// faults do.
    func loadMissingRow() {
        hasData = true
        snapshot = values
    }

    /// Whether a fetch returns the object as a fault (its values load on first access).
    func setFetched(asFault: Bool) {
        faultFlag = asFault
    }

    /// Makes the object one of the faults fetched together, which load together.
    func joinFaultBatch(_ batch: FaultBatch) {
        faultBatch = batch
    }

    /// Takes fresh committed values and re-applies the unsaved edits on top: an edit of a
    /// property the other save also changed is dropped when `storeWins`. Returns whether unsaved
    /// edits remain. To-many relationships this context did not change unload (they read again
    /// on next use).
    func refresh(from fresh: ObjectState, storeWins: Bool) -> Bool {
        var merged = fresh.values
        // Transient values are not in the store: a merge keeps them (a fault or a fresh fetch
        // starts them over).
        for i in layout.transientAttributes where i < merged.count && i < values.count {
            merged[i] = values[i]
        }
        var keptAttributes = PropertyIndexSet()
        for i in changedAttributes where i < merged.count {
            let theyChanged = snapshot.indices.contains(i) && snapshot[i] != fresh.values[i]
            if storeWins && theyChanged { continue }
            merged[i] = values[i]
            keptAttributes.insert(i)
        }
        var mergedToOne = fresh.toOne.isEmpty ? toOne : fresh.toOne
        var keptRelationships = PropertyIndexSet()
        for i in changedRelationships {
            if layout.relationships[i].isToMany {
                keptRelationships.insert(i)
                continue
            }
            let theyChanged = snapshotToOne[safe: i] != fresh.toOne[safe: i]
            if storeWins && theyChanged { continue }
            mergedToOne[i] = toOne[i]
            keptRelationships.insert(i)
        }
        values = merged
        snapshot = fresh.values
        toOne = mergedToOne
        if !fresh.toOne.isEmpty { snapshotToOne = fresh.toOne }
        version = fresh.version
        for i in toMany.indices where !(keptRelationships.contains(i) && toMany[i] != nil) {
            toMany[i] = nil
            snapshotToMany[i] = nil
            order[i] = nil
            snapshotOrder[i] = nil
        }
        changedAttributes = keptAttributes
        changedRelationships = keptRelationships
        return !keptAttributes.isEmpty || !keptRelationships.isEmpty
    }

    /// Makes the object a fault again, dropping values and unsaved changes: it is then the same
    /// as a fault never read, so that a row gone by the time it fires reads as empty (not as the
    /// values or edits it dropped), and the values it was fetched with (and their block) are
    /// released.
    func turnIntoFault() {
        hasData = false
        faultFlag = true
        values = RowValues(layout.nullValues)
        snapshot = .none
        toOne = layout.noDestinations
        snapshotToOne = layout.noDestinations
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

    /// Discards the unsaved changes: the committed values and relationships come back, and a
    /// deleted object is registered again.
    func revertToCommitted() {
        lifecycle = .registered
        if !snapshot.isEmpty { values = snapshot }
        toOne = snapshotToOne
        toMany = snapshotToMany
        order = snapshotOrder
        changedAttributes.removeAll()
        changedRelationships.removeAll()
    }

    /// The object is saved, or its deletion undone: an ordinary registered object.
    func markRegistered() {
        lifecycle = .registered
    }

    /// The object is deleted; the deletion is not saved yet.
    func markDeleted() {
        lifecycle = .deleted
    }

    /// The object left its context (deleted and saved, never saved, or the context reset): it
    /// can no longer be used.
    func markInvalid() {
        lifecycle = .invalidated
        contextLink = nil
        companion = nil
    }

    /// An objects-did-change notification announced this inserted object.
    func markInsertAnnounced() {
        insertAnnounced = true
    }

    /// A results controller's pass marked the object as touched by a change.
    package func markTouched(inResultsPass pass: UInt64) {
        resultsPass = pass
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
