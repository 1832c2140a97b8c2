#if !TestKits
    import XCTest

    /// Stands in for serve's router tests in a build without the package trait TestKits
    /// (`scripts/run-tsan` builds so): they need HummingbirdTesting, which such a build does not
    /// compile. `ServeCommandTests` still runs serve itself there.
    final class ServeRouterTestsBuiltWithoutTestKits: XCTestCase {
        func testServeRouterTestsNeedTheTestKitsTrait() throws {
            throw XCTSkip(
                "built without the package trait TestKits: the router tests need HummingbirdTesting; "
                    + "run them with the default traits (scripts/run-tests)")
        }
    }
#endif
