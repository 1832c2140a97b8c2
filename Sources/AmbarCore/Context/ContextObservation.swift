import Foundation
import Synchronization

/// A registration for notifications; notifications stop when it is cancelled or released.
public final class ContextObservation: Sendable {
    private let cancelAction: Locked<(@Sendable () -> Void)?>

    init(cancel: @escaping @Sendable () -> Void) {
        self.cancelAction = Locked(cancel)
    }

    /// Stops the notifications.
    public func cancel() {
        let action = cancelAction.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
