import NIOCore

/// Runs a task's jobs on one event loop: a prepared statement's task (``RecurringStatement``)
/// starts, sends, and reads its answer on the loop of its connection, which answers it there, so
/// a statement costs the same hops between threads as an unnamed one (the caller's thread to the
/// loop and back), not two more through the global executor.
///
/// ```swift
/// let executor = EventLoopTaskExecutor(loop: connection.eventLoop)
/// Task(executorPreference: executor) { try await connection.execute(statement, logger: logger) }
/// ```
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
