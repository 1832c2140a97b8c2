import Foundation

/// Checks batch operations' values against the model before anything is written, the same for
/// every backend.
package enum BatchValidation {
    /// Each row's values in layout order, defaults filled in and coerced to their attribute types.
    package static func insertRows(_ rows: [[String: AttributeValue]], layout: EntityLayout) throws(AmbarError) -> [[AttributeValue]] {
        let entity = layout.name
        guard !layout.description.isAbstract else { throw .invalidFetchRequest("entity '\(entity)' is abstract") }
        var prepared: [[AttributeValue]] = []
        prepared.reserveCapacity(rows.count)
        for (n, row) in rows.enumerated() {
            for key in row.keys where layout.attributeIndex[key] == nil {
                throw .unknownProperty(entity: entity, property: key)
            }
            var values: [AttributeValue] = []
            values.reserveCapacity(layout.attributes.count)
            for attribute in layout.attributes {
                let given = row[attribute.name] ?? attribute.defaultValue
                guard let value = given.coerced(to: attribute.type) else {
                    throw .typeMismatch(entity: entity, property: attribute.name, expected: attribute.type, got: given.kindName)
                }
                if value.isNull && !attribute.isOptional {
                    throw .invalidFetchRequest("row \(n) of the batch insert has no value for non-optional '\(entity).\(attribute.name)'")
                }
                values.append(value)
            }
            prepared.append(values)
        }
        return prepared
    }

    /// The columns a batch update sets and their coerced values, in name order.
    package static func updateAssignments(_ values: [String: AttributeValue], layout: EntityLayout) throws(AmbarError) -> [(
        column: String, value: AttributeValue
    )] {
        var assignments: [(column: String, value: AttributeValue)] = []
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let i = layout.attributeIndex[name] else { throw .unknownProperty(entity: layout.name, property: name) }
            let attribute = layout.attributes[i]
            guard let coerced = value.coerced(to: attribute.type) else {
                throw .typeMismatch(entity: layout.name, property: name, expected: attribute.type, got: value.kindName)
            }
            if coerced.isNull && !attribute.isOptional {
                throw .invalidFetchRequest("batch update sets non-optional '\(layout.name).\(name)' to nil")
            }
            assignments.append((try layout.column(ofAttribute: i), coerced))
        }
        return assignments
    }
}
