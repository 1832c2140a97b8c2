// Built with the package trait TestKits (a default trait; scripts/run-tsan leaves it off).
#if TestKits
    import SwiftSyntax
    import SwiftSyntaxMacroExpansion
    import SwiftSyntaxMacros
    import SwiftSyntaxMacrosTestSupport
    import XCTest

    @testable import AmbarMacroExpansions

    /// SwiftData's `@Model` and `@ModelActor` (AmbarSwiftData), expanded in process: what they write
    /// into a class, and the errors they give where they cannot apply.
    final class SwiftDataModelMacroTests: XCTestCase {
        private let specs: [String: MacroSpec] = [
            "Model": MacroSpec(type: PersistentModelMacro.self, conformances: ["PersistentModel", "Observable"]),
            "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
            "ModelActor": MacroSpec(type: ModelActorMacro.self),
        ]

        func testAModelClassGetsItsBackingDataAccessorsAndConformances() {
            assertMacroExpansion(
                """
                @Model final class Note {
                    var title: String
                    @Transient var isSelected = false
                    init(title: String) { self.title = title }
                }
                """,
                expandedSource: #"""
                    final class Note {
                        var title: String {
                            @storageRestrictions(accesses: _$backingData, initializes: _$title)
                            init(initialValue) {
                                if _$backingData._isUnassigned {
                                    _$backingData = AmbarSwiftData._ModelBacking()
                                }
                                _$backingData._setInitialValue(initialValue, forKey: "title")
                                _$title = AmbarSwiftData._PersistedStorage()
                            }
                            get {
                                _$observationRegistrar.access(self, keyPath: \.title)
                                return self._persistedValue(forKey: \.title, "title")
                            }
                            set {
                                _$observationRegistrar.withMutation(of: self, keyPath: \.title) {
                                    self._setPersistedValue(forKey: \.title, "title", to: newValue)
                                }
                            }
                        }

                        private let _$title: AmbarSwiftData._PersistedStorage
                        @Transient var isSelected = false
                        init(title: String) { self.title = title }

                        var _$backingData = AmbarSwiftData._ModelBacking._unassigned

                        let _$observationRegistrar = Observation.ObservationRegistrar()

                        var persistentBackingData: AmbarSwiftData._ModelBacking {
                            _$backingData
                        }

                        static var schemaMetadata: [AmbarSwiftData.Schema.PropertyMetadata] {
                            [
                                AmbarSwiftData.Schema.PropertyMetadata(\Note.title, "title"),
                            ]
                        }

                        static var _$schemaConstraints: AmbarSwiftData.Schema._Constraints<Note> {
                            AmbarSwiftData.Schema._Constraints(
                                unique: [
                                ],
                                indexes: [
                                ])
                        }

                        required init(backingData: AmbarSwiftData._ModelBacking) {
                            _$backingData = backingData
                            self._$title = AmbarSwiftData._PersistedStorage()
                        }

                        func _$observedValueChanged(_ name: String) {
                            switch name {
                            case "title":
                                _$observationRegistrar.withMutation(of: self, keyPath: \Note.title) {
                                }
                            default:
                                break
                            }
                        }
                    }

                    extension Note: AmbarSwiftData.PersistentModel {
                    }

                    extension Note: Observation.Observable {
                    }
                    """#,
                macroSpecs: specs)
        }

        func testAModelWithOnlyConstantsMakesItsOwnBackingData() {
            assertMacroExpansion(
                """
                @Model final class Tag {
                    let name: String
                    init(name: String) { self.name = name }
                }
                """,
                expandedSource: #"""
                    final class Tag {
                        let name: String
                        init(name: String) { self.name = name }

                        var _$backingData = AmbarSwiftData._ModelBacking()

                        let _$observationRegistrar = Observation.ObservationRegistrar()

                        var persistentBackingData: AmbarSwiftData._ModelBacking {
                            _$backingData
                        }

                        static var schemaMetadata: [AmbarSwiftData.Schema.PropertyMetadata] {
                            [
                                AmbarSwiftData.Schema.PropertyMetadata(\Tag.name, "name", isConstant: true),
                            ]
                        }

                        static var _$schemaConstraints: AmbarSwiftData.Schema._Constraints<Tag> {
                            AmbarSwiftData.Schema._Constraints(
                                unique: [
                                ],
                                indexes: [
                                ])
                        }

                        required init(backingData: AmbarSwiftData._ModelBacking) {
                            _$backingData = backingData
                            self.name = backingData._restoredValue(for: \Tag.name, "name")
                        }

                        func _$observedValueChanged(_ name: String) {
                            switch name {
                            default:
                                break
                            }
                        }
                    }

                    extension Tag: AmbarSwiftData.PersistentModel {
                    }

                    extension Tag: Observation.Observable {
                    }
                    """#,
                macroSpecs: specs)
        }

        func testModelOnAStructIsAnError() {
            assertMacroExpansion(
                """
                @Model struct Note {
                    var title: String
                }
                """,
                expandedSource: """
                    struct Note {
                        var title: String
                    }
                    """,
                diagnostics: [DiagnosticSpec(message: "@Model applies to a class", line: 1, column: 1)],
                macroSpecs: specs)
        }

        func testAnImplicitlyUnwrappedPropertyIsAnErrorThatSaysWhatToWrite() {
            assertMacroExpansion(
                """
                @Model final class Note {
                    var title: String!
                }
                """,
                expandedSource: #"""
                    final class Note {
                        var title: String! {
                            @storageRestrictions(accesses: _$backingData, initializes: _$title)
                            init(initialValue) {
                                if _$backingData._isUnassigned {
                                    _$backingData = AmbarSwiftData._ModelBacking()
                                }
                                _$backingData._setInitialValue(initialValue, forKey: "title")
                                _$title = AmbarSwiftData._PersistedStorage()
                            }
                            get {
                                _$observationRegistrar.access(self, keyPath: \.title)
                                return self._persistedValue(forKey: \.title, "title")
                            }
                            set {
                                _$observationRegistrar.withMutation(of: self, keyPath: \.title) {
                                    self._setPersistedValue(forKey: \.title, "title", to: newValue)
                                }
                            }
                        }

                        private let _$title: AmbarSwiftData._PersistedStorage

                        var _$backingData = AmbarSwiftData._ModelBacking()

                        let _$observationRegistrar = Observation.ObservationRegistrar()

                        var persistentBackingData: AmbarSwiftData._ModelBacking {
                            _$backingData
                        }

                        static var schemaMetadata: [AmbarSwiftData.Schema.PropertyMetadata] {
                            [
                            ]
                        }

                        static var _$schemaConstraints: AmbarSwiftData.Schema._Constraints<Note> {
                            AmbarSwiftData.Schema._Constraints(
                                unique: [
                                ],
                                indexes: [
                                ])
                        }

                        required init(backingData: AmbarSwiftData._ModelBacking) {
                            _$backingData = backingData
                        }

                        func _$observedValueChanged(_ name: String) {
                            switch name {
                            default:
                                break
                            }
                        }
                    }

                    extension Note: AmbarSwiftData.PersistentModel {
                    }

                    extension Note: Observation.Observable {
                    }
                    """#,
                diagnostics: [
                    DiagnosticSpec(message: "'title' cannot be implicitly unwrapped: declare it optional ('?') or give it a default value", line: 2, column: 5)
                ],
                macroSpecs: specs)
        }

        func testModelActorOnAClassIsAnError() {
            assertMacroExpansion(
                """
                @ModelActor final class Importer {}
                """,
                expandedSource: """
                    final class Importer {}
                    """,
                diagnostics: [DiagnosticSpec(message: "@ModelActor applies to an actor", line: 1, column: 1)],
                macroSpecs: specs)
        }
    }
#endif
