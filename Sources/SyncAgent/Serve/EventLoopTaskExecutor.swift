// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOCore

    /// Runs a task's jobs on one NIO event loop.
    ///
    /// A change stream that follows the shared reader (``ChangeBroadcast``) prefers the event loop
    /// of its own connection (`withTaskExecutorPreference`): when the reader queues its events,
    /// the stream wakes on that loop and its response writes reach the channel there, with no hop
    /// through Swift's cooperative threads and back. Only code that never blocks runs there — the
    /// stream's queue and its writes; its reads of the store stay on ``StoreReadPool``.
    final class EventLoopTaskExecutor: TaskExecutor {
        /// The loop the jobs run on.
        let eventLoop: any EventLoop

        init(_ eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
        }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }
#endif
