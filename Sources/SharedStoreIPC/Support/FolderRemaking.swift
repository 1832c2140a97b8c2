import Foundation

/// Makes a folder of a store's shared directory again while a process runs (the `.ambar` folder
/// of the bell, a hub socket's folder), never the directories above it: a shared directory
/// removed under a running process is gone, not something for that process to make again (it
/// would be left behind, empty but for the file the process put there).
enum FolderRemaking {
    /// Why a folder was not made again.
    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// Makes `folder` when it is missing, inside a parent that still exists.
    ///
    /// - Throws: ``Refused`` when the parent is gone, or the folder cannot be made.
    static func remake(_ folder: String) throws(Refused) {
        let parent = (folder as NSString).deletingLastPathComponent
        guard FileManager.default.fileExists(atPath: parent) else {
            throw Refused(description: "the directory \(parent) no longer exists; not made again")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        } catch  where FileManager.default.fileExists(atPath: folder) {
            // There already, or made meanwhile by another process of the store.
        } catch {
            throw Refused(description: "cannot create \(folder): \(error.localizedDescription)")
        }
    }
}
