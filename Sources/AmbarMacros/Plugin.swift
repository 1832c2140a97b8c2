import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The macros `AmbarModels` declares.
@main
struct AmbarMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self,
        DeclaredPropertyMacro.self,
        PropertyOptionsMacro.self,
    ]
}
