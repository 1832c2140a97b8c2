import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// SwiftData's `@Model` (`AmbarSwiftData`): a plain class becomes a persistent model, as
/// SwiftData expands it. Each persisted `var` gets `@_PersistedProperty` (accessors that read and
/// write the model's backing data, seen by Observation); the class gets the backing data, an
/// observation registrar, `schemaMetadata`, `init(backingData:)` and the `PersistentModel`,
/// `Observable` and `Sendable` conformances.
open class PersistentModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: Member attributes

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
            let persisted = PersistedMember(variable), !persisted.isLet,
            StoredProperty.attribute(named: "_PersistedProperty", in: variable) == nil
        else { return [] }
        return ["@_PersistedProperty"]
    }

    // MARK: Members

    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let type = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: PersistentModelDiagnostic.notAClass))
            return []
        }
        let className = type.name.text
        let access = type.modifiers.contains { ["public", "open"].contains($0.name.text) } ? "public " : ""
        var metadata: [String] = []
        var placeholders: [String] = []
        var restoredLets: [String] = []
        var observed: [String] = []
        var unique: [String] = []
        var indexes: [String] = []
        // A model with a persisted `var` gets its backing data from the first `init` accessor
        // that runs (none run for a model the context makes for a stored object, which is given
        // its backing data): the default is a shared placeholder, not one made to be dropped.
        var hasPersistedVar = false
        for member in type.memberBlock.members {
            if let expansion = member.decl.as(MacroExpansionDeclSyntax.self) {
                let arguments = expansion.arguments.map { $0.expression.trimmedDescription }
                switch expansion.macroName.text {
                case "Unique": unique += arguments
                case "Index": indexes += arguments
                default: break
                }
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self), let persisted = PersistedMember(variable) else { continue }
            if variable.bindings.first?.typeAnnotation?.type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) == true {
                context.diagnose(Diagnostic(node: variable, message: PersistentModelDiagnostic.implicitlyUnwrapped(persisted.name)))
                continue
            }
            if !persisted.isLet { hasPersistedVar = true }
            var arguments = ["\\\(className).\(persisted.name)", "\"\(persisted.name)\""]
            if let initializer = persisted.initializer { arguments.append("default: \(initializer)") }
            arguments += persisted.optionArguments
            if persisted.isLet { arguments.append("isConstant: true") }
            metadata.append("AmbarSwiftData.Schema.PropertyMetadata(\(arguments.joined(separator: ", ")))")
            if persisted.isLet {
                restoredLets.append("self.\(persisted.name) = backingData._restoredValue(for: \\\(className).\(persisted.name), \"\(persisted.name)\")")
            } else {
                // Those with a default (optionals have nil) were initialized by it already.
                if persisted.initializer == nil && !persisted.isOptionalType {
                    placeholders.append("self._$\(persisted.name) = AmbarSwiftData._PersistedStorage()")
                }
                observed.append(
                    "case \"\(persisted.name)\": _$observationRegistrar.withMutation(of: self, keyPath: \\\(className).\(persisted.name)) {}")
            }
        }
        let uniqueList = unique.map { "\n            \($0)," }.joined()
        let indexList = indexes.map { "\n            \($0)," }.joined()
        return [
            "\(raw: access)var _$backingData = AmbarSwiftData._ModelBacking\(raw: hasPersistedVar ? "._unassigned" : "()")",
            "\(raw: access)let _$observationRegistrar = Observation.ObservationRegistrar()",
            "\(raw: access)var persistentBackingData: AmbarSwiftData._ModelBacking { _$backingData }",
            """
            \(raw: access)static var schemaMetadata: [AmbarSwiftData.Schema.PropertyMetadata] {
                [\(raw: metadata.map { "\n        \($0)," }.joined())
                ]
            }
            """,
            """
            \(raw: access)static var _$schemaConstraints: AmbarSwiftData.Schema._Constraints<\(raw: className)> {
                AmbarSwiftData.Schema._Constraints(
                    unique: [\(raw: uniqueList)
                    ],
                    indexes: [\(raw: indexList)
                    ])
            }
            """,
            """
            \(raw: access)required init(backingData: AmbarSwiftData._ModelBacking) {
                _$backingData = backingData\(raw: (placeholders + restoredLets).map { "\n    \($0)" }.joined())
            }
            """,
            """
            \(raw: access)func _$observedValueChanged(_ name: String) {
                switch name {\(raw: observed.map { "\n    \($0)" }.joined())
                default: break
                }
            }
            """,
        ]
    }

    // MARK: Conformances

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        let wanted = Set(protocols.map { $0.trimmedDescription.split(separator: ".").last.map(String.init) ?? "" })
        var extensions: [ExtensionDeclSyntax] = []
        if wanted.contains("PersistentModel") {
            extensions.append(try ExtensionDeclSyntax("extension \(type.trimmed): AmbarSwiftData.PersistentModel {}"))
        }
        if wanted.contains("Observable") {
            extensions.append(try ExtensionDeclSyntax("extension \(type.trimmed): Observation.Observable {}"))
        }
        if wanted.contains("Sendable") {
            // The persisted values live in the backing data, which serialises access through the
            // model's context; other stored properties are the class's own business, as in SwiftData.
            extensions.append(try ExtensionDeclSyntax("extension \(type.trimmed): @unchecked Sendable {}"))
        }
        return extensions
    }
}

/// `@_PersistedProperty`: a persisted `var` of a SwiftData-style `@Model` class becomes accessors
/// of the model's backing data (an `init` accessor that records the initial value, a getter and
/// a setter that Observation sees), with a placeholder peer the `init` accessor initialises.
open class PersistedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let persisted = PersistedMember(variable), !persisted.isLet else { return [] }
        let name = persisted.name
        return [
            """
            @storageRestrictions(accesses: _$backingData, initializes: _$\(raw: name))
            init(initialValue) {
                if _$backingData._isUnassigned { _$backingData = AmbarSwiftData._ModelBacking() }
                _$backingData._setInitialValue(initialValue, forKey: \(literal: name))
                _$\(raw: name) = AmbarSwiftData._PersistedStorage()
            }
            """,
            """
            get {
                _$observationRegistrar.access(self, keyPath: \\.\(raw: name))
                return self._persistedValue(forKey: \\.\(raw: name), \(literal: name))
            }
            """,
            """
            set {
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: name)) {
                    self._setPersistedValue(forKey: \\.\(raw: name), \(literal: name), to: newValue)
                }
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let persisted = PersistedMember(variable), !persisted.isLet else { return [] }
        return ["private let _$\(raw: persisted.name): AmbarSwiftData._PersistedStorage"]
    }
}

/// `#Unique` and `#Index`: read by `@Model` from the class's members; they add nothing
/// themselves.
open class SchemaConstraintMacro: DeclarationMacro {
    public static func expansion(of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}

/// `@ModelActor`: an actor with its own model context, on an executor of its own.
open class ModelActorMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: PersistentModelDiagnostic.notAnActor))
            return []
        }
        let access = declaration.modifiers.contains { ["public", "open"].contains($0.name.text) } ? "public " : ""
        return [
            "\(raw: access)nonisolated let modelExecutor: any AmbarSwiftData.ModelExecutor",
            "\(raw: access)nonisolated let modelContainer: AmbarSwiftData.ModelContainer",
            """
            \(raw: access)init(modelContainer: AmbarSwiftData.ModelContainer) {
                let modelContext = AmbarSwiftData.ModelContext(modelContainer)
                self.modelExecutor = AmbarSwiftData.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): AmbarSwiftData.ModelActor {}")]
    }
}

/// What SwiftData's `@Model` and `@ModelActor` report at a declaration they cannot expand.
enum PersistentModelDiagnostic: DiagnosticMessage {
    case notAClass
    case notAnActor
    case implicitlyUnwrapped(String)

    var message: String {
        switch self {
        case .notAClass: return "@Model applies to a class"
        case .notAnActor: return "@ModelActor applies to an actor"
        case .implicitlyUnwrapped(let name):
            return "'\(name)' cannot be implicitly unwrapped: declare it optional ('?') or give it a default value"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "AmbarSwiftData", id: "\(self)") }
    var severity: DiagnosticSeverity { .error }
}
