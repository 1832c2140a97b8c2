import AmbarCore
import AmbarDataStack

/// Checks every half second that the file at the store's path is still the store `coordinator`
/// opened; returns ``AmbarError/storeReplaced(path:)`` once it is not, nil when cancelled.
func storeReplacement(of coordinator: PersistentStoreCoordinator) async -> AmbarError? {
    while !Task.isCancelled {
        do {
            try coordinator.verifyStoreIdentity()
        } catch {
            if case .storeReplaced = error { return error }
        }
        do { try await Task.sleep(for: .milliseconds(500)) } catch { return nil }
    }
    return nil
}
