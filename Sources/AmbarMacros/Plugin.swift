import AmbarMacroExpansions
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The macros `AmbarModels` and `AmbarSwiftData` declare.
///
/// The compiler asks a plugin for a macro by its declaring module's name and its type's name
/// (`#externalMacro(module: "AmbarMacros", type: "ModelMacro")`), so each macro has a type of that
/// name here; what it expands to is its superclass's, in `AmbarMacroExpansions` (a library, which
/// the macro tests link without building this plugin for the host a second time).
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

/// AmbarModels' `@Model`.
final class ModelMacro: AmbarMacroExpansions.ModelMacro {}
/// AmbarModels' `@_DeclaredProperty`.
final class DeclaredPropertyMacro: AmbarMacroExpansions.DeclaredPropertyMacro {}
/// AmbarModels' `@Attribute`, `@Relationship` and `@Transient`.
final class PropertyOptionsMacro: AmbarMacroExpansions.PropertyOptionsMacro {}
/// AmbarSwiftData's `@Model`.
final class PersistentModelMacro: AmbarMacroExpansions.PersistentModelMacro {}
/// AmbarSwiftData's persisted-property accessors.
final class PersistedPropertyMacro: AmbarMacroExpansions.PersistedPropertyMacro {}
/// AmbarSwiftData's `#Unique` and `#Index`.
final class SchemaConstraintMacro: AmbarMacroExpansions.SchemaConstraintMacro {}
/// AmbarSwiftData's `@ModelActor`.
final class ModelActorMacro: AmbarMacroExpansions.ModelActorMacro {}
