import AmbarStack
import Foundation
import GRDBSQLite
import SharedStoreIPC

/// What a child process recorded, shared between its threads.
final class Recorder: Sendable {
    let values = Locked<[Int64]>([])
}

/// The child-process side of workloads 6 and 7. Each role answers commands on stdin, one line each:
/// `count` (latencies or frames recorded), `report` (the latencies, in ns), `reset`, `quit`.
enum CrossProcessRoles {
    /// The model both ends of workload 6 use: a row per object, stamped with the publisher's
    /// CLOCK_MONOTONIC at commit start.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Stamp",
                properties: [
                    .attribute("uid", .string),
                    .attribute("stamp", .integer64, defaultValue: 0),
                ], uniquenessConstraints: [["uid"]])
        ])
    }

    /// An AmbarStack process sharing the store: every object registered in its main context; a
    /// latency recorded when a remote save's object is refreshed there.
    static func ambarReceiver(directory: URL) throws -> Never {
        let stack = try DataStack.open(model: .model(try model()), storeURL: directory.appendingPathComponent("bench.sqlite"), name: "bench")
        try receive(stack: stack, directory: directory)
    }

    /// Shares `stack` through `directory` and records, for each remote save, the time from its
    /// stamp to the object's refresh in the main context.
    static func receive(stack: DataStack, directory: URL) throws -> Never {
        let latencies = Recorder()
        let main = try stack.mainContext
        let sharing = share(stack, through: directory) { event, t in
            for id in event.refreshed {
                if case .integer(let stamp)? = try? main.registeredObject(for: id)?.value(forKey: "stamp") {
                    latencies.values.withLock { $0.append(t - stamp) }
                }
            }
        }
        DispatchQueue.main.async {
            // Register and load every object, as a viewer showing them would.
            let main = try? stack.mainContext
            _ = try? main?.fetch(FetchRequest<ManagedObject>(entityName: "Stamp")).map { try $0.value(forKey: "stamp") }
            say("ready")
        }
        withExtendedLifetime(sharing) { serve(latencies: latencies) }
    }

    /// The physical path without the library: a blocking read on a Unix stream socket for the
    /// changed row's id, then a SELECT of that row through the raw C API.
    static func rawReceiver(store: String, socket: String) throws -> Never {
        let latencies = Recorder()
        let fd = PosixSocket.connect(socket)
        guard fd >= 0 else {
            say("error connect")
            exit(1)
        }
        Thread.detachNewThread {
            var handle: OpaquePointer?
            sqlite3_open_v2(store, &handle, SQLITE_OPEN_READWRITE, nil)
            sqlite3_busy_timeout(handle, 10_000)
            var statement: OpaquePointer?
            sqlite3_prepare_v2(handle, "SELECT stamp FROM stamp WHERE id = ?", -1, &statement, nil)
            var id: Int64 = 0
            while withUnsafeMutableBytes(of: &id, { PosixSocket.readFully(fd, $0) }) {
                sqlite3_bind_int64(statement, 1, id)
                if sqlite3_step(statement) == SQLITE_ROW {
                    let stamp = sqlite3_column_int64(statement, 0)
                    let t = now()
                    latencies.values.withLock { $0.append(t - stamp) }
                }
                sqlite3_reset(statement)
            }
        }
        say("ready")
        serve(latencies: latencies)
    }

    /// Records every token the hub tells this process of (workload 7): a did-save's, or the
    /// newest one in the token-only frame a receiver gets after it fell behind.
    static func hubReceiver(socket: String, storeUUID: UUID) throws -> Never {
        let frames = Recorder()
        let ready = DispatchSemaphore(value: 0)
        let holder = Locked<[AnyObject]>([])
        Task.detached {
            let group = MultiThreadedEventLoopGroupHolder.shared
            let client = try await SyncClient.connect(
                socketPath: socket,
                hello: .init(storeUUID: storeUUID, processID: getpid(), instanceID: ProcessInstance.id, processName: "hub-receiver", cursor: 0),
                group: group,
                onFrame: { frame in
                    switch frame {
                    case .didSave(let save): frames.values.withLock { $0.append(save.token) }
                    case .tokenOnly(_, let token, _, _): frames.values.withLock { $0.append(token) }
                    default: break
                    }
                }, onClose: {})
            holder.withLock { $0 = [client] }
            ready.signal()
        }
        ready.wait()
        say("ready")
        serve(latencies: frames)
    }

    /// Starts sharing `stack` through `directory`, calling `onMerge` on the main queue with each
    /// remote merge and the CLOCK_MONOTONIC time it ended; returns once sharing runs, with what
    /// must stay alive while the process does.
    static func share(_ stack: DataStack, through directory: URL, onMerge: @escaping @Sendable (RemoteMergeEvent, Int64) -> Void) -> Locked<[AnyObject]> {
        let holder = Locked<[AnyObject]>([])
        let ready = DispatchSemaphore(value: 0)
        Task.detached {
            let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
            let observation = sync.observeRemoteMerges { event in onMerge(event, now()) }
            holder.withLock { $0 = [sync, observation] }
            ready.signal()
        }
        ready.wait()
        return holder
    }

    /// Answers the parent's commands until `quit`.
    static func serve(latencies: Recorder) -> Never {
        Thread.detachNewThread {
            while let line = readLine() {
                switch line {
                case "report": say(latencies.values.withLock { $0.map(String.init).joined(separator: " ") })
                case "count": say(String(latencies.values.withLock { $0.count }))
                case "through": say(String(latencies.values.withLock { $0.max() ?? 0 }))
                case "reset":
                    latencies.values.withLock { $0.removeAll() }
                    say("ok")
                default: exit(0)
                }
            }
            exit(0)
        }
        dispatchMain()
    }
}
