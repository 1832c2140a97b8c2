import AmbarCore
import AmbarDataStack
import AmbarResults

/// A type stored as a plain attribute value — typically an enum stored as its raw value — with a
/// fallback for stored values it does not know (Ambar's `CoreDataRepresentable`).
///
/// ```swift
/// enum Status: Int16, AttributeRepresentable {
///     case draft = 0, published = 1
///     static let fallback = Status.draft
/// }
/// final class Post: ManagedObject {
///     @Managed("status") var status: Status   // a stored 99 reads as .draft
/// }
/// ```
/// Raw-representable types get ``storedValue`` and ``init(storedValue:)`` for free.
public protocol AttributeRepresentable: AttributeValueConvertible {
    /// The type actually stored.
    associatedtype StoredValue: AttributeValueConvertible
    /// The value to store.
    var storedValue: StoredValue { get }
    /// The value for a stored value, or `nil` when it has none.
    init?(storedValue: StoredValue)
    /// What a stored value without a matching case reads as.
    static var fallback: Self { get }
}

extension AttributeRepresentable {
    public var attributeValue: AttributeValue { storedValue.attributeValue }

    /// The value for `attributeValue`: the matching case, ``fallback`` for an unknown stored value,
    /// `nil` when the stored value is not even a `StoredValue`.
    public init?(attributeValue: AttributeValue) {
        guard let stored = StoredValue(attributeValue: attributeValue) else { return nil }
        self = Self(storedValue: stored) ?? Self.fallback
    }

    public static var placeholder: Self { fallback }
}

extension AttributeRepresentable where Self: RawRepresentable, RawValue: AttributeValueConvertible, StoredValue == RawValue {
    public var storedValue: RawValue { rawValue }
    public init?(storedValue: RawValue) { self.init(rawValue: storedValue) }
}
