// Built with the package trait TestKits (a default trait; scripts/run-tsan leaves it off).
#if TestKits
    import SwiftSyntax
    import SwiftSyntaxMacroExpansion
    import SwiftSyntaxMacros
    import SwiftSyntaxMacrosTestSupport
    import XCTest

    @testable import AmbarMacroExpansions

    /// AmbarModels' `@Model` on a `ManagedObject` subclass, expanded in process: the entity it
    /// declares, and the errors that say what to write instead.
    final class DeclaredModelMacroTests: XCTestCase {
        private let specs: [String: MacroSpec] = [
            "Model": MacroSpec(type: ModelMacro.self, conformances: ["DeclaredModel"])
        ]

        func testADeclaredModelListsItsProperties() {
            assertMacroExpansion(
                """
                @Model final class Employee: ManagedObject {
                    var name: String
                    var salary: Double = 0
                }
                """,
                expandedSource: #"""
                    final class Employee: ManagedObject {
                        @_DeclaredProperty
                        var name: String
                        @_DeclaredProperty
                        var salary: Double = 0

                        static var declaredProperties: [DeclaredProperty<Employee>] {
                            [
                                .property(\Employee.name, "name"),
                                .property(\Employee.salary, "salary", default: 0),
                            ]
                        }
                    }

                    extension Employee: DeclaredModel {
                    }
                    """#,
                macroSpecs: specs)
        }

        func testModelOnAStructIsAnError() {
            assertMacroExpansion(
                """
                @Model struct Employee {
                    var name: String
                }
                """,
                expandedSource: #"""
                    struct Employee {
                        var name: String
                    }
                    """#,
                diagnostics: [DiagnosticSpec(message: "@Model applies to a class that subclasses ManagedObject", line: 1, column: 1)],
                macroSpecs: specs)
        }

        func testAPropertyWithoutItsTypeIsAnErrorThatSaysWhatToWrite() {
            assertMacroExpansion(
                """
                @Model final class Employee: ManagedObject {
                    var active = false
                }
                """,
                expandedSource: #"""
                    final class Employee: ManagedObject {
                        @_DeclaredProperty
                        var active = false

                        static var declaredProperties: [DeclaredProperty<Employee>] {
                            [
                            ]
                        }
                    }

                    extension Employee: DeclaredModel {
                    }
                    """#,
                diagnostics: [
                    DiagnosticSpec(
                        message:
                            "write the type of 'active' (for example 'var active: Bool = false'): a declared property keeps its value in the object, so Swift needs the type spelled out",
                        line: 2, column: 5)
                ],
                macroSpecs: specs)
        }
    }
#endif
