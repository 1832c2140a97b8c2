import SwiftSyntax

/// A stored `var` of a `@Model` class, as the macros read it: what becomes a property of the
/// entity.
struct StoredProperty {
    let declaration: VariableDeclSyntax
    let name: String
    let type: TypeSyntax?
    let initializer: ExprSyntax?
    /// `@Attribute(…)`'s arguments, when present.
    let attribute: AttributeSyntax?
    /// `@Relationship(…)`'s arguments, when present.
    let relationship: AttributeSyntax?

    /// The property `declaration` declares, when it is part of the entity: an instance `var`
    /// with one identifier, no accessors, not `lazy`, not marked `@Transient`.
    init?(_ declaration: VariableDeclSyntax) {
        guard declaration.bindingSpecifier.tokenKind == .keyword(.var), declaration.bindings.count == 1,
            let binding = declaration.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self), binding.accessorBlock == nil
        else { return nil }
        let excluded: Set<String> = ["static", "class", "lazy", "override"]
        guard !declaration.modifiers.contains(where: { excluded.contains($0.name.text) }) else { return nil }
        if Self.attribute(named: "Transient", in: declaration) != nil { return nil }
        self.declaration = declaration
        name = identifier.identifier.text
        type = binding.typeAnnotation?.type.trimmed
        initializer = binding.initializer?.value.trimmed
        attribute = Self.attribute(named: "Attribute", in: declaration)
        relationship = Self.attribute(named: "Relationship", in: declaration)
    }

    static func attribute(named name: String, in declaration: VariableDeclSyntax) -> AttributeSyntax? {
        for element in declaration.attributes {
            if let attribute = element.as(AttributeSyntax.self),
                attribute.attributeName.trimmedDescription == name || attribute.attributeName.trimmedDescription.hasSuffix(".\(name)")
            {
                return attribute
            }
        }
        return nil
    }

    /// Whether the type is written as an optional (`T?`, `Optional<T>`).
    var isOptionalType: Bool { type?.isWrittenOptional ?? false }

    /// Whether the type is written as an implicitly unwrapped optional (`T!`), which a declared
    /// property cannot be.
    var isImplicitlyUnwrapped: Bool { type?.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) ?? false }

    /// The type as an expression of its metatype: `String.self`, `(String?).self`.
    var metatypeExpression: String {
        guard let type else { return "" }
        return "(\(type.trimmedDescription)).self"
    }

    /// The argument that gives the accessors and the entity the declaration's default: the
    /// initializer, or `nil` for an optional without one.
    var defaultArgument: String? {
        if let initializer { return "default: \(initializer.trimmedDescription)" }
        if isOptionalType { return "default: nil" }
        return nil
    }

    /// The arguments of `@Attribute` or `@Relationship` as `DeclaredProperty.property` takes them.
    var optionArguments: [String] {
        var result: [String] = []
        if let attribute, case .argumentList(let arguments)? = attribute.arguments {
            let options = arguments.filter { $0.label == nil }.map { $0.expression.trimmedDescription }
            if !options.isEmpty { result.append("options: [\(options.joined(separator: ", "))]") }
            for argument in arguments where argument.label?.text == "originalName" {
                result.append("originalName: \(argument.expression.trimmedDescription)")
            }
        }
        if let relationship, case .argumentList(let arguments)? = relationship.arguments {
            let byLabel = Dictionary(arguments.compactMap { a in a.label.map { ($0.text, a.expression) } }, uniquingKeysWith: { first, _ in first })
            if let rule = byLabel["deleteRule"] { result.append("deleteRule: \(rule.trimmedDescription)") }
            if let inverse = byLabel["inverse"], let keyPath = inverse.as(KeyPathExprSyntax.self),
                let last = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self)
            {
                result.append("inverse: \(inverse.trimmedDescription)")
                result.append("inverseName: \"\(last.declName.baseName.text)\"")
            }
            if let original = byLabel["originalName"] { result.append("originalName: \(original.trimmedDescription)") }
            if let ordered = byLabel["ordered"] { result.append("ordered: \(ordered.trimmedDescription)") }
        }
        return result
    }
}

extension TypeSyntax {
    /// Whether the type is written as an optional (`T?`, `Optional<T>`).
    var isWrittenOptional: Bool {
        if self.is(OptionalTypeSyntax.self) { return true }
        if let identifier = self.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional" { return true }
        return false
    }
}
