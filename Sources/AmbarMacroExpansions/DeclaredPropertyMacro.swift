import SwiftSyntax
import SwiftSyntaxMacros

/// `@_DeclaredProperty`: a stored property of a `@Model` class becomes accessors of the
/// object's values (`_declaredGet` and `_declaredSet`, chosen by the compiler from the property's
/// type), with an `init` accessor that accepts the declaration's initial value (the entity keeps
/// it as the attribute's default).
open class DeclaredPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        // What cannot be declared is reported once, by `@Model`, at the property.
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = StoredProperty(variable),
            property.type != nil, !property.isImplicitlyUnwrapped
        else { return [] }
        let name = property.name
        let defaultArgument = property.defaultArgument.map { ", \($0)" } ?? ""
        var accessors: [AccessorDeclSyntax] = []
        if property.initializer != nil {
            accessors.append("init(initialValue) {}")
        }
        accessors.append("get { _declaredGet(\(literal: name), \(raw: property.metatypeExpression)\(raw: defaultArgument)) }")
        accessors.append("set { _declaredSet(\(literal: name), newValue) }")
        return accessors
    }
}
