import FuzzChecks
import FuzzDriver

/// libFuzzer's entry point: checks one input with ``PredicateFormatChecks/check(_:)`` and traps
/// (which libFuzzer reports as a finding, with the input saved) when a property does not hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicateFormat(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    if let failure = PredicateFormatChecks.check(bytes) { fatalError(failure) }
    return 0
}

/// The executable's entry point. SwiftPM links executables with `main` aliased to
/// `<module>_main`, so libFuzzer's own `main` cannot be used; this one starts libFuzzer's driver.
@_cdecl("fuzz_predicate_format_main")
public func fuzzPredicateFormatMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzzPredicateFormat($0, $1) }
}
