/// A weak reference that crosses queues: the observers of a context hold their owner through it,
/// and only touch the owner on the context's queue.
final class UncheckedBox<Value: AnyObject>: @unchecked Sendable {
    weak var value: Value?
    init(_ value: Value) { self.value = value }
}
