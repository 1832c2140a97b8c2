import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Model`: a `ManagedObject` subclass declares its entity. Each stored `var` gets
/// `@_DeclaredProperty` (its accessors); the class gets `declaredProperties` (one
/// `DeclaredProperty` per stored property, with its key path, name, default and options), the
/// `DeclaredModel` conformance, and the initializer contexts use when it declares initializers of
/// its own.
open class ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: Member attributes

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
            StoredProperty(variable) != nil,
            StoredProperty.attribute(named: "_DeclaredProperty", in: variable) == nil
        else { return [] }
        return ["@_DeclaredProperty"]
    }

    // MARK: Members

    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let type = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAClass))
            return []
        }
        let className = type.name.text
        let access = type.modifiers.contains { ["public", "open"].contains($0.name.text) } ? "public " : ""
        var entries: [String] = []
        for member in type.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), let property = StoredProperty(variable) else { continue }
            if property.type == nil {
                context.diagnose(Diagnostic(node: variable, message: ModelDiagnostic.missingType(property.name)))
                continue
            }
            if property.isImplicitlyUnwrapped {
                context.diagnose(Diagnostic(node: variable, message: ModelDiagnostic.implicitlyUnwrapped(property.name)))
                continue
            }
            var arguments = ["\\\(className).\(property.name)", "\"\(property.name)\""]
            if let initializer = property.initializer { arguments.append("default: \(initializer.trimmedDescription)") }
            arguments += property.optionArguments
            entries.append(".property(\(arguments.joined(separator: ", ")))")
        }
        var members: [DeclSyntax] = [
            """
            \(raw: access)static var declaredProperties: [DeclaredProperty<\(raw: className)>] {
                [\(raw: entries.map { "\n        \($0)," }.joined())
                ]
            }
            """
        ]
        if case .argumentList(let arguments)? = node.arguments {
            if let original = arguments.first(where: { $0.label?.text == "originalName" }) {
                members.append("\(raw: access)static var declaredOriginalName: String? { \(original.expression.trimmed) }")
            }
            if let name = arguments.first(where: { $0.label?.text == "name" }) {
                members.append("\(raw: access)override class var entityName: String { \(name.expression.trimmed) }")
            }
        }
        // A class with initializers of its own inherits none: contexts still need this one.
        let declaresInitializers = type.memberBlock.members.contains { $0.decl.is(InitializerDeclSyntax.self) }
        if declaresInitializers {
            members.append(
                """
                \(raw: access)required init(_ token: ManagedObjectInitToken) {
                    super.init(token)
                }
                """)
        }
        return members
    }

    // MARK: Conformance

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): DeclaredModel {}")]
    }
}

/// What `@Model` reports at a declaration it cannot turn into an entity.
enum ModelDiagnostic: DiagnosticMessage {
    case notAClass
    case missingType(String)
    case implicitlyUnwrapped(String)

    var message: String {
        switch self {
        case .notAClass:
            return "@Model applies to a class that subclasses ManagedObject"
        case .missingType(let name):
            return
                "write the type of '\(name)' (for example 'var \(name): Bool = false'): a declared property keeps its value in the object, so Swift needs the type spelled out"
        case .implicitlyUnwrapped(let name):
            return "'\(name)' cannot be implicitly unwrapped: declare it optional ('?') or give it a default value"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "AmbarMacros", id: "\(self)") }
    var severity: DiagnosticSeverity { .error }
}
