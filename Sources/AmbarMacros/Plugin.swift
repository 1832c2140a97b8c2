import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The macros `AmbarModels` and `AmbarSwiftData` declare.
@main
struct AmbarMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self,
        DeclaredPropertyMacro.self,
        PropertyOptionsMacro.self,
        PersistentModelMacro.self,
        PersistedPropertyMacro.self,
        SchemaConstraintMacro.self,
        ModelActorMacro.self,
    ]
}
