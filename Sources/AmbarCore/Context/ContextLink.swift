/// The one object through which a context's managed objects reach it.
///
/// Every object holds its context's link strongly and the link holds the context weakly, so an
/// object does not keep its context alive and reads `nil` once the context is gone, as with a
/// weak reference of its own. Making an object then costs one plain retain of the link: a weak
/// reference per object registered itself in the context's side table (and retained and released
/// the context through it), which was a twentieth of a large fetch.
final class ContextLink {
    /// The context; `nil` once it is gone. Set once, while the context is made.
    weak var context: ManagedObjectContext?

    init() {}
}
