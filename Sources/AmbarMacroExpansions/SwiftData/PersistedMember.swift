import SwiftSyntax

/// A member of a SwiftData-style `@Model` class (`AmbarSwiftData`), as the macros read it: what
/// becomes a property of the entity.
///
/// An instance `var` with one identifier and no accessors, not `lazy` and not `@Transient`, is
/// persisted through accessors (its type may come from its default: `var status = Status.open`).
/// An instance `let` without a default is persisted too: written when the model is inserted,
/// given back when it is fetched; a `let` with a default stays an ordinary constant.
struct PersistedMember {
    let declaration: VariableDeclSyntax
    let name: String
    let type: TypeSyntax?
    let initializer: ExprSyntax?
    let isLet: Bool
    let attribute: AttributeSyntax?
    let relationship: AttributeSyntax?

    init?(_ declaration: VariableDeclSyntax) {
        guard declaration.bindings.count == 1, let binding = declaration.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self), binding.accessorBlock == nil
        else { return nil }
        let excluded: Set<String> = ["static", "class", "lazy", "override"]
        guard !declaration.modifiers.contains(where: { excluded.contains($0.name.text) }) else { return nil }
        if StoredProperty.attribute(named: "Transient", in: declaration) != nil { return nil }
        let name = identifier.identifier.text
        guard !name.hasPrefix("_$") else { return nil }
        isLet = declaration.bindingSpecifier.tokenKind == .keyword(.let)
        if isLet && binding.initializer != nil { return nil }
        self.declaration = declaration
        self.name = name
        type = binding.typeAnnotation?.type.trimmed
        initializer = binding.initializer?.value.trimmed
        attribute = StoredProperty.attribute(named: "Attribute", in: declaration)
        relationship = StoredProperty.attribute(named: "Relationship", in: declaration)
    }

    /// Whether the type is written as an optional (`T?`, `Optional<T>`), which starts as `nil`.
    var isOptionalType: Bool { type?.isWrittenOptional ?? false }

    /// The arguments of `@Attribute` and `@Relationship`, as `Schema.PropertyMetadata` takes
    /// them (SwiftData's own labels).
    var optionArguments: [String] {
        var result: [String] = []
        if let attribute, case .argumentList(let arguments)? = attribute.arguments {
            let options = arguments.filter { $0.label == nil }.map { $0.expression.trimmedDescription }
            if !options.isEmpty { result.append("attributeOptions: [\(options.joined(separator: ", "))]") }
            for argument in arguments {
                switch argument.label?.text {
                case "originalName": result.append("originalName: \(argument.expression.trimmedDescription)")
                case "hashModifier": result.append("hashModifier: \(argument.expression.trimmedDescription)")
                default: break
                }
            }
        }
        if let relationship, case .argumentList(let arguments)? = relationship.arguments {
            let options = arguments.filter { $0.label == nil }.map { $0.expression.trimmedDescription }
            if !options.isEmpty { result.append("relationshipOptions: [\(options.joined(separator: ", "))]") }
            for argument in arguments {
                guard let label = argument.label?.text else { continue }
                switch label {
                case "deleteRule", "minimumModelCount", "maximumModelCount", "originalName", "hashModifier":
                    result.append("\(label): \(argument.expression.trimmedDescription)")
                case "inverse":
                    result.append("inverse: \(argument.expression.trimmedDescription)")
                    if let keyPath = argument.expression.as(KeyPathExprSyntax.self),
                        let last = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self)
                    {
                        result.append("inverseName: \"\(last.declName.baseName.text)\"")
                    }
                default: break
                }
            }
        }
        return result
    }
}
