import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation

/// A managed object identified by a string attribute, usually a UUID (BBLCoreDataKit's
/// `BBLObject`). Give the attribute a uniqueness constraint to keep two contexts from creating
/// the same id twice.
public protocol StringIdentified: ManagedObject {
    /// The identifier.
    var idString: String { get set }
    /// The attribute holding it; `"idString"` by default.
    static var idStringKey: String { get }
}

extension StringIdentified {
    public static var idStringKey: String { "idString" }

    /// The identifier as a UUID, or `nil` when it is not one (the seed crashed).
    public var identifier: UUID? {
        get { UUID(uuidString: idString) }
        set { if let newValue { idString = newValue.uuidString } }
    }
}
