// `diskfull` and `readonly`: store safety when the disk fills up or the file system is read-only.
// Both run inside a private mount namespace with a small tmpfs at <dir> (see DiskFullTests), or,
// for `diskfull … fsize`, anywhere: the process's file-size limit stands in for the full disk.
import AmbarStack
import AmbarTestSupport
import Foundation

/// Takes the space away and gives it back.
private protocol SpaceThief {
    func take() throws
    func giveBack() throws
}

/// Fills the file system holding `directory` with a filler file until it is full.
private struct FillerFile: SpaceThief {
    let file: URL

    func take() throws {
        let fd = open(file.path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HelperError("cannot create \(file.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0xAB, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                guard errno == ENOSPC else { throw HelperError("filler write: \(String(cString: strerror(errno)))") }
                return
            }
        }
    }

    func giveBack() throws { try FileManager.default.removeItem(at: file) }
}

/// Lowers the process's file-size limit (RLIMIT_FSIZE) to just above the store's files, with
/// SIGXFSZ ignored so writes past it fail with EFBIG instead of killing the process.
private struct FileSizeLimit: SpaceThief {
    let files: [URL]

    func take() throws {
        signal(SIGXFSZ, SIG_IGN)
        let largest = files.compactMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? UInt64 }.max() ?? 0
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        limit.rlim_cur = rlim_t(largest + 16 * 1024)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { throw HelperError("setrlimit: \(String(cString: strerror(errno)))") }
    }

    func giveBack() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { throw HelperError("setrlimit: \(String(cString: strerror(errno)))") }
    }
}

struct HelperError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The number of items the store holds, read through a coordinator of its own (its own
/// connections, as another process would read).
private func storedCount(_ store: URL) throws -> Int {
    let reader = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: reader, name: "reader")
    return try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }
}

/// Saves 100 items, takes the space away, tries to save 3,000 more (~700 KB), reports what
/// happened, gives the space back and saves the same context again. One line per step:
///   error <AmbarError case>: <description> | kept <inserted objects> | readable <count>
///   integrity <ok | problems> | saved | count <n> | integrity …
func runDiskFull(directory: URL, mode: String) throws {
    let store = directory.appendingPathComponent("full.sqlite")
    let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "filler")
    try context.performAndWait { () throws in
        for i in 0..<100 { try context.insertObject(entityName: "Item").setValue("first-\(i)", forKey: "uid") }
        try context.save()
    }
    let thief: any SpaceThief =
        mode == "tmpfs"
        ? FillerFile(file: directory.appendingPathComponent("filler"))
        : FileSizeLimit(files: [store, URL(fileURLWithPath: store.path + "-wal")])
    try thief.take()

    let padding = String(repeating: "p", count: 200)
    context.performAndWait {
        do {
            for i in 0..<3_000 { try context.insertObject(entityName: "Item").setValue("second-\(i)-\(padding)", forKey: "uid") }
            try context.save()
            reply("saved unexpectedly")
        } catch {
            reply("error \(caseName(error)): \(error)")
        }
        reply("kept \(context.insertedObjects.count)")
    }
    do {
        reply("readable \(try storedCount(store))")
    } catch {
        reply("readable failed: \(error)")
    }
    let problems = try coordinator.integrityCheck()
    reply("integrity \(problems.isEmpty ? "ok" : problems.joined(separator: "; "))")

    try thief.giveBack()
    try context.performAndWait { () throws in try context.save() }
    reply("saved")
    reply("count \(try storedCount(store))")
    let after = try coordinator.integrityCheck()
    reply("integrity \(after.isEmpty ? "ok" : after.joined(separator: "; "))")
}

/// Creates a store with 10 items and closes it, remounts <dir> read-only, tries to open the store
/// again, then remounts it read-write and opens it:
///   error <AmbarError case>: <description> | count <n>
func runReadOnly(directory: URL) throws {
    let store = directory.appendingPathComponent("readonly.sqlite")
    do {
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "writer")
        try context.performAndWait { () throws in
            for i in 0..<10 { try context.insertObject(entityName: "Item").setValue("item-\(i)", forKey: "uid") }
            try context.save()
        }
    }
    try remount(directory, options: "remount,ro")
    do {
        _ = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        reply("opened unexpectedly")
    } catch {
        reply("error \(caseName(error)): \(error)")
    }
    try remount(directory, options: "remount,rw")
    reply("count \(try storedCount(store))")
}

private func remount(_ directory: URL, options: String) throws {
    let result = try ProcessRunner.run(URL(fileURLWithPath: "/bin/mount"), ["-o", options, directory.path], timeout: 10)
    guard result.status == 0 else { throw HelperError("mount -o \(options) failed: \(result.error)") }
}

/// The enum case of an error, for the test to match on.
private func caseName(_ error: any Error) -> String {
    guard let ambar = error as? AmbarError else { return "\(type(of: error))" }
    return String("\(Mirror(reflecting: ambar).children.first?.label ?? "\(ambar)")")
}
