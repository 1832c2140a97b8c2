import Foundation

/// Something a context could not do for a call that cannot throw: a fault that could not be read
/// (the object stays a fault and reads as empty this time), a typed property write that was not
/// applied, a merge or a results controller that could not read what it needed.
///
/// Such calls (`object.name = "x"`, reading `object.name`) have no way to throw, so the context
/// reports the failure to its observers as well as to the log. Observe them where a lost write or
/// a stale value matters:
///
/// ```swift
/// let failures = context.observeFailures { failure in
///     alert("\(failure.operation) failed: \(failure.error)")
/// }
/// ```
///
/// The throwing forms (``ManagedObject/value(forKey:)``, ``ManagedObject/setValue(_:forKey:)-(AttributeValue,_)``)
/// report through their error instead.
public struct ContextFailure: Sendable, CustomStringConvertible {
    /// What was being done: "read a fault", "write a property", "merge", "refetch results".
    public let operation: String
    /// The object concerned, if one is.
    public let object: ManagedObjectID?
    /// The property concerned, if one is.
    public let property: String?
    /// Why it failed.
    public let error: AmbarError

    /// Creates a failure report.
    public init(operation: String, object: ManagedObjectID?, property: String?, error: AmbarError) {
        self.operation = operation
        self.object = object
        self.property = property
        self.error = error
    }

    public var description: String {
        var text = operation
        if let object { text += " of \(object.uriString)" }
        if let property { text += " (\(property))" }
        return "\(text) failed: \(error)"
    }
}

extension ManagedObjectContext {
    /// Calls `callback` on the context's queue for each failure of a call that cannot throw (see
    /// ``ContextFailure``), until the observation is cancelled or released.
    public func observeFailures(_ callback: @escaping @Sendable (ContextFailure) -> Void) -> ContextObservation {
        failureObservers.add(callback)
    }

    /// The failures reported from now on.
    public func failures() -> AsyncStream<ContextFailure> { failureObservers.stream() }

    /// Logs `failure` and tells the observers.
    package func report(_ failure: ContextFailure) {
        Self.logger.error("\(failure)", metadata: ["context": "\(displayName)"])
        failureObservers.post(failure)
    }
}
