import Foundation

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
