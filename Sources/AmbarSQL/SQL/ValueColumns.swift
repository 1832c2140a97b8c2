import AmbarCore

extension EntityLayout {
    /// The attributes a values fetch asks for, with their columns, in the order asked; the same
    /// checks on every backend.
    ///
    /// - Throws: ``AmbarError/invalidFetchRequest(_:)`` for no properties,
    ///   ``AmbarError/unknownProperty(entity:property:)`` for a name that is not a stored attribute.
    package func valueColumns(_ properties: [String]) throws(AmbarError) -> (attributes: [AttributeDescription], columns: [String]) {
        guard !properties.isEmpty else { throw .invalidFetchRequest("a values fetch needs at least one property") }
        var attributes: [AttributeDescription] = []
        var columns: [String] = []
        for name in properties {
            guard let i = attributeIndex[name] else { throw .unknownProperty(entity: self.name, property: name) }
            attributes.append(self.attributes[i])
            columns.append(try column(ofAttribute: i))
        }
        return (attributes, columns)
    }
}
