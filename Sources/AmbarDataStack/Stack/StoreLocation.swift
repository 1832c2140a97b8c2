import AmbarCore
import AmbarSQLite
import Foundation

/// Where a stack keeps its store, following systemd and XDG conventions.
public enum StoreLocation {
    /// The default store name: the process name trimmed of leading and trailing characters that are
    /// not letters or digits (Ambar's "clean app name"), or "ambar" when nothing is left.
    public static var defaultName: String {
        let name = ProcessInfo.processInfo.processName.trimmingCharacters(in: CharacterSet.alphanumerics.inverted)
        return name.isEmpty ? "ambar" : name
    }

    /// The default directory: `$STATE_DIRECTORY` (systemd's `StateDirectory=`, first entry) when
    /// set, else `$XDG_DATA_HOME/<name>`, else `~/.local/share/<name>`.
    public static func defaultDirectory(name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !state.isEmpty {
            return URL(fileURLWithPath: String(state), isDirectory: true)
        }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent(name, isDirectory: true)
        }
        let home =
            environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/\(name)", isDirectory: true)
    }

    /// The store file for a given location: a directory (existing, or written with a trailing
    /// slash) gets `<name>.sqlite` inside it; anything else is the file path itself. `nil` means
    /// the default directory.
    public static func storeFile(for location: URL?, name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        guard let location else {
            return defaultDirectory(name: name, environment: environment).appendingPathComponent("\(name).sqlite")
        }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory)
        if (exists && isDirectory.boolValue) || location.hasDirectoryPath {
            return location.appendingPathComponent("\(name).sqlite")
        }
        return location
    }

    /// Creates the file's missing parent directories and the file itself with mode 0660 (group
    /// read/write, so a setgid group directory works for several service users). An existing file
    /// keeps its mode.
    static func prepare(_ file: URL) throws(AmbarError) {
        let directory = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .storeCannotOpen(
                path: file.path, reason: "cannot create directory \(directory.path): \(error.localizedDescription)", cause: ErrorCause(error))
        }
        let fd = open(file.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o660)
        if fd >= 0 {
            fchmod(fd, 0o660)  // the umask must not narrow it
            close(fd)
        } else if errno != EEXIST {
            throw .storeCannotOpen(path: file.path, reason: String(cString: strerror(errno)))
        }
    }
}
