import FuzzChecks

/// libFuzzer's entry point: checks one input with ``WireChecks/check(_:)`` and traps (which
/// libFuzzer reports as a finding, with the input saved) when a property does not hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWire(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    if let failure = WireChecks.check(bytes) { fatalError(failure) }
    return 0
}
