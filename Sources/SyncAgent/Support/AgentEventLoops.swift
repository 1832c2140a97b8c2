import AmbarCore
import NIOCore
import NIOPosix

/// The agent's one event-loop group: a single loop, which every part of a command runs on — the
/// hub or the hub connection, the HTTP server of `serve`, the metrics endpoint. One thread and
/// three descriptors whatever the machine's cores (NIO's shared group has a loop per core),
/// made on first use once the descriptors are there, and never shut down (it lives as long as
/// the process, as NIO's shared group does).
enum AgentEventLoops {
    private static let made = Locked<MultiThreadedEventLoopGroup?>(nil)

    /// The group, for `operation`.
    ///
    /// - Throws: `AmbarError.tooManyOpenFiles` when the process cannot open what the loop takes
    ///   when it starts, and a few descriptors besides (NIO stops the process when a loop's is
    ///   refused).
    static func group(for operation: String) throws(AmbarError) -> MultiThreadedEventLoopGroup {
        try made.withLock { made throws(AmbarError) -> MultiThreadedEventLoopGroup in
            if let made { return made }
            try DescriptorBudget.require(8, for: operation)  // the loop's three, and a few for its first sockets
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            made = group
            return group
        }
    }
}
