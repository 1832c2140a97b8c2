import FuzzChecks
import RecordImport

/// Made once: building the model for every input would swamp the measurement.
nonisolated(unsafe) private let decoder = try? ImportLineChecks.makeDecoder()

/// libFuzzer's entry point: checks one input with ``ImportLineChecks/check(_:decoder:)`` and
/// traps (which libFuzzer reports as a finding, with the input saved) when a property does not hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImportLine(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let decoder else { fatalError("the fuzzing model does not build") }
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    if let failure = ImportLineChecks.check(bytes, decoder: decoder) { fatalError(failure) }
    return 0
}
