import AmbarStack

/// The values a model was given before it was inserted, in the order given: a short list, since
/// a model has a few properties and each is set once or twice — cheaper to keep than a
/// dictionary for every model an importer makes.
///
/// A value of an attribute type is kept converted as well, so that inserting the model stores it
/// without a dynamic cast.
struct PendingValues {
    /// One property's value.
    struct Entry {
        let name: String
        var value: Any
        /// The value as the store keeps it, for a property of an attribute type.
        var attribute: AttributeValue?
    }

    private(set) var entries: [Entry] = []

    /// No values.
    static var none: PendingValues { PendingValues() }

    /// The value given for property `name`, if any.
    subscript(name: String) -> Any? {
        for entry in entries where entry.name == name { return entry.value }
        return nil
    }

    /// Records `value` for property `name` (and its stored form, for an attribute type).
    mutating func set(_ value: Any, attribute: AttributeValue? = nil, for name: String) {
        for index in entries.indices where entries[index].name == name {
            entries[index].value = value
            entries[index].attribute = attribute
            return
        }
        if entries.isEmpty { entries.reserveCapacity(8) }
        entries.append(Entry(name: name, value: value, attribute: attribute))
    }
}
