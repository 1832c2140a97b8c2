import Tracing

/// Starts a span of Ambar's work with the process's tracer, or returns `nil` when the process has
/// none (nothing bootstrapped, and no `withTracer` scope around the call).
///
/// swift-distributed-tracing's `startSpan` finds the tracer by a dynamic cast of the instrument
/// to the tracer protocols on every call, and setting an attribute on its no-op span still
/// builds the attribute dictionary: about 5% of a sharing process's merge work with no tracer
/// at all. The instrument is compared with the library's no-op types here instead (a type
/// check, no conformance lookup), and a caller without a span skips its attributes:
///
/// ```swift
/// let span = startSpanIfTracing("ambar.merge")
/// defer { span?.end() }
/// span?.attributes["ambar.token"] = token
/// ```
package func startSpanIfTracing(
    _ operationName: String, function: String = #function, file fileID: String = #fileID, line: UInt = #line
) -> (any Span)? {
    let instrument = InstrumentationSystem.instrument
    if instrument is NoOpInstrument || instrument is NoOpTracer { return nil }
    return startSpan(operationName, function: function, file: fileID, line: line)
}
