import AmbarCore
import AmbarDataStack
import AmbarSystemd

/// The settings of a running command: the command line's, overlaid by the configuration file,
/// which is read again on each reload. A setting removed from the file falls back to the command
/// line's value, not to what the previous file said.
final class LiveSettings: Sendable {
    private let base: AgentSettings
    private let file: String?
    private let current: Locked<AgentSettings>

    /// The settings from `base` (defaults and command line) and `file`; throws on a bad file.
    init(base: AgentSettings, file: String?) throws {
        self.base = base
        self.file = file
        let loaded = try AgentSettings.load(file, defaults: base)
        current = Locked(loaded)
        LogLevelControl.shared.level = loaded.logLevel
    }

    /// The settings in force.
    var value: AgentSettings { current.withLock { $0 } }

    /// Reads the file again and applies its log level; a bad file throws and changes nothing.
    @discardableResult
    func reload() throws -> AgentSettings {
        let loaded = try AgentSettings.load(file, defaults: base)
        current.withLock { $0 = loaded }
        LogLevelControl.shared.level = loaded.logLevel
        return loaded
    }
}
