import FuzzChecks
import FuzzDriver
import RecordImport

/// Made once: building the model for every input would swamp the measurement.
nonisolated(unsafe) private let decoder = try? ImportLineChecks.makeDecoder()

/// libFuzzer's entry point: checks one input with ``ImportLineChecks/check(_:decoder:)`` and
/// traps (which libFuzzer reports as a finding, with the input saved) when a property does not hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImportLine(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let decoder else { fatalError("the fuzzing model does not build") }
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    if let failure = ImportLineChecks.check(bytes, decoder: decoder) { fatalError(failure) }
    return 0
}

/// The executable's entry point. SwiftPM links executables with `main` aliased to
/// `<module>_main`, so libFuzzer's own `main` cannot be used; this one starts libFuzzer's driver.
@_cdecl("fuzz_import_line_main")
public func fuzzImportLineMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzzImportLine($0, $1) }
}
