import Synchronization

/// The settings in force, replaced on reload.
final class SettingsBox: Sendable {
    private let storage: Mutex<AgentSettings>
    init(_ settings: AgentSettings) { storage = Mutex(settings) }
    var value: AgentSettings {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
