/// The values a model was given before it was inserted, by property name: a short list, since a
/// model has a few properties and each is set once or twice — cheaper to keep than a dictionary
/// for every model an importer makes.
struct PendingValues: ExpressibleByDictionaryLiteral {
    private var entries: [(name: String, value: Any)] = []

    init(dictionaryLiteral elements: (String, Any)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The value given for property `name`, if any.
    subscript(name: String) -> Any? {
        get {
            for index in entries.indices where entries[index].name == name { return entries[index].value }
            return nil
        }
        set {
            for index in entries.indices where entries[index].name == name {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
                return
            }
            if let newValue { entries.append((name, newValue)) }
        }
    }
}
