import Synchronization

/// A thread-safe list of callbacks, each called with every posted value.
package final class ObserverList<Value: Sendable>: Sendable {
    /// The callbacks in the order they were added (keys only grow, so appending keeps it).
    private let entries = Locked<[(key: UInt64, callback: @Sendable (Value) -> Void)]>([])
    private let counter = Atomic<UInt64>(0)
    /// How to end each live stream, by key.
    private let finishers = Locked<[(key: UInt64, finish: @Sendable () -> Void)]>([])

    /// Creates an empty list.
    package init() {}

    /// Adds `callback`; it is called until the returned observation is cancelled or released.
    package func add(_ callback: @escaping @Sendable (Value) -> Void) -> ContextObservation {
        let key = counter.add(1, ordering: .relaxed).newValue
        entries.withLock { $0.append((key, callback)) }
        return ContextObservation { [weak self] in
            self?.entries.withLock { $0.removeAll { $0.key == key } }
        }
    }

    /// Calls every callback with `value`, on the caller's thread.
    package func post(_ value: Value) {
        // A closure, not a key path: in a generic type a key path is instantiated at each call.
        let callbacks = entries.withLock { $0.map { $0.callback } }
        for callback in callbacks { callback(value) }
    }

    /// An async sequence of the values posted from now on, until the consumer stops iterating
    /// or ``finishStreams()`` ends it.
    package func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .unbounded)
        let observation = add { continuation.yield($0) }
        let key = counter.add(1, ordering: .relaxed).newValue
        finishers.withLock { $0.append((key, { continuation.finish() })) }
        continuation.onTermination = { [weak self] _ in
            observation.cancel()
            self?.finishers.withLock { $0.removeAll { $0.key == key } }
        }
        return stream
    }

    /// Ends every stream made by ``stream()``: their loops finish after the values already
    /// posted. Callbacks added with ``add(_:)`` stay.
    package func finishStreams() {
        let all = finishers.withLock { list -> [@Sendable () -> Void] in
            defer { list = [] }
            return list.map { $0.finish }
        }
        for finish in all { finish() }
    }
}
