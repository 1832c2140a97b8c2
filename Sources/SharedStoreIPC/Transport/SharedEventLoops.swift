import AmbarCore
import NIOCore
import NIOPosix

/// NIO's shared event loops (`MultiThreadedEventLoopGroup.singleton`: one loop per core), which
/// sharing, the hub and the agent's commands run on unless a program gives its own group.
///
/// A loop takes three descriptors when it starts, and NIO stops the process when one is refused
/// (`EMFILE`): the group is handed out only once the process has those descriptors, so that a low
/// limit on open files is an error that says so, not a crash.
package enum SharedEventLoops {
    /// The shared group, for `operation`, once the process can open what its loops take when they
    /// start and `more` descriptors besides.
    ///
    /// - Throws: ``AmbarError/tooManyOpenFiles(operation:limit:)`` when it cannot.
    package static func group(for operation: String, more: Int) throws(AmbarError) -> any EventLoopGroup {
        try DescriptorBudget.require(3 * System.coreCount + more, for: operation)
        return MultiThreadedEventLoopGroup.singleton
    }
}
