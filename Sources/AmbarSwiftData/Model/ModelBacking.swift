import AmbarStack
import Foundation
import Logging
import Synchronization

/// Where a model's persisted values live (what SwiftData calls its backing data): in the model
/// until it is inserted into a context, then in the managed object it stands for.
///
/// Every read and write of an inserted model runs on its context's queue (at once when the
/// caller is on it already), so a model may be handed between threads as SwiftData's models
/// are. Written by the `@Model` macro into each model; not for direct use.
public final class _ModelBacking: @unchecked Sendable {
    // All state is guarded by `lock`; the managed object is only touched on its context's queue.
    // The lock is one of a few shared by all models (one lock each would cost two allocations
    // per model); they live as long as the process, so the backing holds its lock unretained.
    private unowned(unsafe) let lock: NSLock
    /// The values given before insertion, by property name.
    private var pending = PendingValues.none
    /// Values last read or written, by property name, for properties whose type has no
    /// placeholder (enumerations, `Codable` values, non-optional relationships): what a read gives
    /// while the stored value cannot be read, besides reporting why.
    private var known: [String: Any] = [:]
    /// The managed object the model stands for, and what the model keeps of its context, once
    /// inserted or fetched. A context keeps the models it has handed out (as it keeps their
    /// managed objects), so a model keeps the work underneath (the link), not the context.
    private var attached: (object: ManagedObject, link: ContextLink)?

    /// Whether the model came from the context `link` leads to.
    func isLinked(to link: ContextLink) -> Bool { lock.withLock { attached?.link === link } }

    static let logger = Logger(label: "ambar.swiftdata.model")

    /// The locks of all models, taken in turn.
    private static let sharedLocks = (0..<16).map { _ in NSLock() }
    private static let nextSharedLock = Atomic<Int>(0)

    private static func takeLock() -> NSLock {
        sharedLocks[nextSharedLock.wrappingAdd(1, ordering: .relaxed).oldValue & 15]
    }

    /// Whether this is ``_unassigned``.
    public let _isUnassigned: Bool

    /// The backing data a model starts with before its first persisted property is initialized,
    /// which gives it one of its own (`@Model` writes this; a model never keeps it).
    public static let _unassigned = _ModelBacking(unassigned: ())

    private init(unassigned: Void) {
        lock = Self.takeLock()
        _isUnassigned = true
    }

    /// A backing for a model not inserted yet.
    public init() {
        lock = Self.takeLock()
        _isUnassigned = false
    }

    /// A backing for a model that stands for `object` in the context `link` leads to.
    init(object: ManagedObject, link: ContextLink) {
        self.lock = Self.takeLock()
        _isUnassigned = false
        attached = (object, link)
    }

    // MARK: - What the macro writes

    /// Records `value` as property `name`'s value given in the model's initializer.
    public func _setInitialValue<V>(_ value: V, forKey name: String) {
        lock.withLock { pending.set(value, for: name) }
    }

    /// Records `value` as attribute `name`'s value given in the model's initializer, with the
    /// form the store keeps it in.
    public func _setInitialValue<V: DeclarableAttributeValue>(_ value: V, forKey name: String) {
        let attribute = value.attributeValue
        lock.withLock { pending.set(value, attribute: attribute, for: name) }
    }

    /// The stored value of the persisted `let` `name`, for a model made for a stored object.
    public func _restoredValue<Root, V: DeclarableAttributeValue>(for keyPath: KeyPath<Root, V>, _ name: String) -> V {
        read(name, placeholder: V.placeholder) { object, _ throws(AmbarError) in try PersistedValues.read(object, name, as: V.self) }
    }

    // MARK: - State

    /// The managed object and context the model stands in, once inserted or fetched.
    var attachment: (object: ManagedObject, context: ModelContext)? {
        lock.withLock { attached }.map { ($0.object, $0.link.current) }
    }

    /// The managed object the model stands for, once inserted or fetched (without asking for its
    /// context, so that no successor is made to answer this).
    var managedObject: ManagedObject? { lock.withLock { attached?.object } }

    /// The context the model was inserted into or fetched from, while it lives.
    /// (Its own, or the successor its link makes once that one is gone.)
    var modelContext: ModelContext? { lock.withLock { attached }?.link.current }

    /// Takes the values given before insertion, to insert the model with them.
    func takePending() -> PendingValues {
        lock.withLock {
            defer { pending = .none }
            return pending
        }
    }

    /// Gives back values taken with ``takePending()`` (the insert failed); a value given since
    /// stays.
    func restorePending(_ values: PendingValues) {
        lock.withLock {
            for entry in values.entries where pending[entry.name] == nil {
                pending.set(entry.value, attribute: entry.attribute, for: entry.name)
            }
        }
    }

    /// Moves the model into `context` as `object`; returns the values given before (since
    /// ``takePending()``).
    func attach(to object: ManagedObject, in context: ModelContext) -> PendingValues {
        lock.withLock {
            attached = (object, context.link)
            defer { pending = .none }
            return pending
        }
    }

    /// Leaves the context (the model was deleted and the deletion saved, or the context rolled
    /// back its insertion): the model keeps the values it last had, as a model not inserted.
    func detach(keeping values: PendingValues) {
        lock.withLock {
            attached = nil
            pending = values
        }
    }

    /// Runs `body` on the queue of the context that holds `object` (at once when there is none).
    func onQueue<T>(of object: ManagedObject, _ body: () -> T) -> T {
        guard let context = lock.withLock({ attached })?.link.current else { return body() }
        return context.onQueue(body)
    }

    /// Records `value` as the last known value of property `name` (read when a model is made for
    /// a stored object).
    func remember(_ value: Any, for name: String) {
        lock.withLock { known[name] = value }
    }

    // MARK: - Reads and writes

    /// The stored value of attribute `name` when it can be read at once, without generic code
    /// and without a closure: the model is in a context, the caller is on its queue, and the
    /// read succeeds. `nil` sends the caller to ``read(_:placeholder:remember:_:)``, which reads
    /// the same value the general way and reports what went wrong, if anything did.
    @usableFromInline
    func storedAttribute(_ name: String) -> AttributeValue? {
        lock.lock()
        let object = attached?.object
        let queue = attached?.link.queue
        lock.unlock()
        guard let object, queue?.isCurrent == true else { return nil }
        return try? object.value(forKey: name)  // try?: the general read repeats it and reports the error
    }

    /// Reads property `name`: from the managed object on its context's queue, or from the values
    /// given before insertion. A value that cannot be read is reported (the context's failures,
    /// which its next save throws) and the last value known, or `placeholder`, is given instead.
    func read<V>(_ name: String, placeholder: @autoclosure () -> V?, remember: Bool = false, _ body: (ManagedObject, ModelContext) throws -> V) -> V {
        lock.lock()
        let attached = self.attached
        lock.unlock()
        guard let (object, link) = attached else { return Self.fallback(lock.withLock { pending[name] }, placeholder(), name) }
        let context = link.current
        do {
            let value = try context.onQueue { try body(object, context) }
            if remember { lock.withLock { known[name] = value } }
            return value
        } catch {
            context.report(error, reading: name, of: object)
            return Self.fallback(lock.withLock { known[name] }, placeholder(), name)
        }
    }

    /// The last value known, else the placeholder.
    private static func fallback<V>(_ known: Any?, _ placeholder: V?, _ name: String) -> V {
        if let value = known as? V { return value }
        if let placeholder { return placeholder }
        unavailable(name, V.self)
    }

    /// Writes property `name`: into the managed object on its context's queue, or into the values
    /// given before insertion. A write that fails is reported (the context's next save throws it).
    func write<V>(_ name: String, _ value: V, remember: Bool = false, _ body: (ManagedObject, ModelContext) throws -> Void) {
        let state = lock.withLock {
            if attached == nil { pending.set(value, for: name) }
            if remember { known[name] = value }
            return attached
        }
        guard let (object, link) = state else { return }
        let context = link.current
        do {
            try context.onQueue { try body(object, context) }
        } catch {
            context.report(error, writing: name, of: object)
        }
    }

    /// A value of a type that has no placeholder was read before it was ever readable. The model
    /// layer rules this out, whatever the input: a model made by its initializer has every
    /// value it declares; a model made for a stored object reads such values when it is made, and
    /// is not made (the fetch throws, `model(for:)` gives an `UnresolvedModel`) if one cannot be
    /// read; later reads fall back on the last value read. Reaching here is a defect of this
    /// library.
    private static func unavailable<V>(_ name: String, _ type: V.Type) -> Never {
        logger.critical("'\(name)' (\(V.self)) was read with no value known: a defect of AmbarSwiftData")
        fatalError("AmbarSwiftData: '\(name)' (\(V.self)) has no value to give; please report this defect")
    }
}
