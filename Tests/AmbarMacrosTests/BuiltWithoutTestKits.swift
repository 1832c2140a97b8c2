#if !TestKits
    import XCTest

    /// Stands in for the macro tests in a build without the package trait TestKits
    /// (`scripts/run-tsan` builds so): they need swift-syntax's macro test support, which such a
    /// build does not compile.
    final class MacroTestsBuiltWithoutTestKits: XCTestCase {
        func testMacroExpansionsNeedTheTestKitsTrait() throws {
            throw XCTSkip(
                "built without the package trait TestKits: the macro tests need SwiftSyntaxMacrosTestSupport; "
                    + "run them with the default traits (scripts/run-tests)")
        }
    }
#endif
