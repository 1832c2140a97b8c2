/// A weak reference that crosses queues: the observers of a context hold their owner through it,
/// and only touch the owner on the context's queue.
package final class UncheckedBox<Value: AnyObject>: @unchecked Sendable {
    package weak var value: Value?
    package init(_ value: Value) { self.value = value }
}
