import AmbarCore
import AmbarDataStack
import Foundation
import Logging
import Tracing

/// Follows one store's ledger for one process: reads the transactions after its cursor and
/// merges other processes' into the main context, in ledger order, each exactly once.
///
/// The ledger is the only truth. A ``Doorbell`` only says "read now"; whatever it claims is
/// checked against the transaction the ledger holds under its token, and a claim that disagrees
/// (or names a transaction the ledger never held) is counted in ``rejectedDoorbells`` and
/// logged, never merged. So a forged, stale or replayed message can make a process read the
/// ledger early, never skip or invent a transaction.
///
/// It does not know how doorbells arrive: anything may call ``ring(_:)`` or ``follow()``, from
/// any thread. One reader runs at a time; a ring during a read makes that reader read again, so
/// no ring is lost and no thread waits for another's read.
final class LedgerFollower: Sendable {
    private struct State {
        var cursor: Int64 = 0
        var stopped = false
        /// A reader is running; `rungAgain` asks it to read once more before it stops.
        var following = false
        var rungAgain = false
        /// Claims of doorbells whose token the ledger has not shown yet, by token.
        var claims: [Int64: Doorbell] = [:]
        var rejected = 0
        /// Transactions whose merge is queued on the main context, in ledger order; one main-queue
        /// block (`mergeScheduled`) merges all of them at once.
        var pendingMerges: [PendingMerge] = []
        /// Pages of the ledger read so far.
        var pagesRead = 0
        /// Transactions of other processes queued for merging so far.
        var mergesQueued = 0
        var mergeScheduled = false
        /// The first token of the batch the main queue is merging now.
        var merging: Int64?
        var lastCursorWrite: ContinuousClock.Instant?
        var lastCursorWritten: Int64 = -1
        /// When the merge position was last recorded (or following started).
        var lastRecorded: ContinuousClock.Instant?
        /// Why recording the merge position fails, once that was logged as a warning.
        var positionFailure: String?
        /// When a disagreement was last logged, and how many came since (logged at most every
        /// 10 s: a hostile peer must not flood the journal).
        var lastRejectionLog: ContinuousClock.Instant?
        var rejectedSinceLog = 0
    }

    /// A transaction waiting for its merge into the main context, with the rows read for the
    /// page of the ledger it came in (shared by the page's transactions; empty when not read).
    private struct PendingMerge {
        let transaction: HistoryTransaction
        let rows: PrefetchedRows
        /// The ledger read the transaction came in (its page's transactions share `rows`).
        let page: Int
    }

    /// The most doorbell claims kept while their transactions are not in the ledger yet.
    static let maximumPendingClaims = 1024
    /// How many transactions one ledger read takes.
    static let pageSize = 500
    /// The most objects whose rows are read ahead for one page of the ledger; a larger page's
    /// are read on the main queue, for the objects it holds only.
    static let maximumRowsReadAhead = 10_000

    private let coordinator: PersistentStoreCoordinator
    private let main: ManagedObjectContext
    private let positionName: String
    private let lease: TimeInterval
    private let heartbeat: Duration
    private let readsRowsAhead: Bool
    private let events: ObserverList<RemoteMergeEvent>
    private let signal: LedgerSignal?
    private let state = Locked(State())
    private let waiters = MergeWaiters()
    private let clock = ContinuousClock()
    static let logger = Logger(label: "ambar.sync.follower")

    /// A follower that merges into `main` and records its merge position as `positionName`, with
    /// `lease` (at least every quarter of it, so that purging knows it is alive); it rings
    /// `signal` whenever it reads new transactions.
    init(
        coordinator: PersistentStoreCoordinator, main: ManagedObjectContext, positionName: String,
        lease: TimeInterval, readsRowsAhead: Bool, events: ObserverList<RemoteMergeEvent>, signal: LedgerSignal? = nil
    ) {
        self.signal = signal
        self.coordinator = coordinator
        self.main = main
        self.positionName = positionName
        self.lease = lease
        self.heartbeat = .milliseconds(Int64(lease * 250))
        self.readsRowsAhead = readsRowsAhead
        self.events = events
    }

    /// Starts following after `token` (the head when sharing began).
    func start(at token: Int64) {
        let now = clock.now
        state.withLock {
            $0.cursor = token
            $0.lastRecorded = now
        }
    }

    /// How long a write of the merge position waits for another connection's write lock. The
    /// position is bookkeeping that the next check writes again: it must not hold the merge queue
    /// (or shutdown) for the store's full busy timeout while another process runs a long
    /// transaction.
    static let positionLockWait: TimeInterval = 1

    /// The last token merged (or skipped as this process's own).
    var cursor: Int64 { state.withLock { $0.cursor } }

    /// The token through which every transaction is in the main context (merged there, or this
    /// process's own, or empty): the cursor, less what is still queued for the main queue.
    var heldThrough: Int64 { state.withLock { Self.heldThrough($0) } }

    private static func heldThrough(_ s: State) -> Int64 {
        if let first = s.merging ?? s.pendingMerges.first?.transaction.token { return first - 1 }
        return s.cursor
    }

    /// Waits until ``heldThrough`` reaches `token`, at most `timeout`; returns whether it did
    /// (false at the time limit, when the task is cancelled, or once following stopped).
    func waitUntilMerged(_ token: Int64, timeout: Duration) async -> Bool {
        await waiters.wait(for: token, timeout: timeout) { [self] in heldThrough }
    }

    /// Resumes the waiters that ``heldThrough`` now covers.
    private func releaseWaiters() {
        waiters.release(through: heldThrough)
    }

    /// Doorbells whose claim disagreed with the ledger, or that named a transaction it does not
    /// hold, since the follower started.
    var rejectedDoorbells: Int { state.withLock { $0.rejected } }

    /// This process committed `token`: when it is the next one, the cursor steps over it (this
    /// process needs no merge of its own transaction). A doorbell for it that came first (a
    /// database server's notification reaches every listener, the saver's host included, and may
    /// arrive before the save returns) is this process's own: its claim is dropped, not left to
    /// be counted as a message the ledger does not back.
    func ownTransactionCommitted(token: Int64) {
        state.withLock { s in
            if token == s.cursor + 1 {
                s.cursor = token
                if let claim = s.claims[token], claim.instanceID == nil || claim.instanceID == ProcessInstance.id {
                    s.claims.removeValue(forKey: token)
                }
            }
        }
        releaseWaiters()
    }

    /// A doorbell: reads the ledger now, unless the token is one already merged.
    func ring(_ doorbell: Doorbell) {
        let span = startSpanIfTracing("ambar.doorbell")
        defer { span?.end() }
        span?.attributes["ambar.token"] = doorbell.token
        let run = state.withLock { s -> Bool in
            guard !s.stopped, doorbell.token > s.cursor else { return false }
            if doorbell.claim != nil || doorbell.instanceID != nil, s.claims.count < Self.maximumPendingClaims {
                s.claims[doorbell.token] = doorbell
            }
            return beginFollowing(&s)
        }
        if run { drain() }
    }

    /// Reads the ledger after the cursor and merges what other processes committed. Returns
    /// whether this call's own read found transactions of other processes: false when a read
    /// already under way, started by a doorbell, reads them instead, and not counting those a
    /// doorbell that rang while this call was reading brought (the call reads again for it).
    @discardableResult
    func follow() -> Bool {
        let run = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            return beginFollowing(&s)
        }
        guard run else { return false }
        return drain() > 0
    }

    private func beginFollowing(_ s: inout State) -> Bool {
        if s.following {
            s.rungAgain = true
            return false
        }
        s.following = true
        return true
    }

    /// Reads until no doorbell rang meanwhile. Returns how many merges the first read queued
    /// (those of the reads a doorbell asked for are the doorbell's).
    @discardableResult
    private func drain() -> Int {
        let before = state.withLock { $0.mergesQueued }
        readLedger()
        let firstRead = state.withLock { $0.mergesQueued } - before
        while rangDuringTheRead() { readLedger() }
        // The position is recorded by the periodic check, never here: a doorbell is followed on
        // a queue of its own, for the shortest commit → merged, which must not wait for SQLite's
        // write lock.
        return firstRead
    }

    /// Whether a doorbell rang during the last read (the ledger is then read again); if none did,
    /// the following ends.
    private func rangDuringTheRead() -> Bool {
        state.withLock { s -> Bool in
            if s.rungAgain && !s.stopped {
                s.rungAgain = false
                return true
            }
            s.following = false
            s.rungAgain = false
            return false
        }
    }

    /// One pass over the ledger after the cursor, page by page.
    private func readLedger() {
        while true {
            let (cursor, expecting) = state.withLock { s in (s.cursor, readsRowsAhead ? Self.expectedRows(s.claims, after: s.cursor) : []) }
            let page: [HistoryTransaction]
            let rows: PrefetchedRows
            let span = startSpanIfTracing("ambar.ledger.read")
            defer { span?.end() }
            span?.attributes["ambar.after"] = cursor
            do {
                // The page and the rows it changed, in one read (SQLite: on a connection of its own;
                // a server: in one statement when the doorbells named those rows).
                (page, rows) = try coordinator.ledgerPage(after: cursor, limit: Self.pageSize, expecting: expecting, rowsOf: rowsToReadAhead)
                span?.attributes["ambar.transactions"] = page.count
            } catch .historyExpired {
                historyExpired(after: cursor)
                return
            } catch {
                Self.logger.error("reading the ledger failed; retrying at the next doorbell or check", metadata: ["error": "\(error)"])
                return
            }
            if !page.isEmpty { signal?.ring() }
            state.withLock { s in
                s.pagesRead += 1
                for transaction in page {
                    if let doorbell = s.claims.removeValue(forKey: transaction.token) {
                        check(doorbell, against: transaction, &s)
                    }
                    // Under the lock: what this process committed meanwhile is skipped, and the
                    // queue gets every transaction in ledger order.
                    guard transaction.token > s.cursor else { continue }
                    s.cursor = transaction.token
                    if transaction.isFromThisProcess || transaction.isEmpty { continue }
                    enqueueMerge(&s, PendingMerge(transaction: transaction, rows: rows, page: s.pagesRead))
                }
                // Claims at or below the cursor that no transaction answered name a transaction
                // the ledger does not hold.
                for (token, _) in s.claims where token <= s.cursor {
                    s.claims.removeValue(forKey: token)
                    reject(token: token, reason: "the ledger holds no transaction with this token", &s)
                }
            }
            releaseWaiters()
            if page.count < Self.pageSize { return }
        }
    }

    /// The objects whose rows are read with a page of the ledger: those that the page's
    /// transactions from other processes inserted or updated, so that their merge on the main
    /// queue reads nothing. They are read in the page's own read transaction, so they are at
    /// least as new as its transactions. None when reading ahead is off or the page names more
    /// than ``maximumRowsReadAhead`` objects: the merge then reads, on the main queue, only the
    /// rows of the objects it holds.
    private func rowsToReadAhead(_ page: [HistoryTransaction]) -> Set<ManagedObjectID>? {
        guard readsRowsAhead else { return nil }
        let cursor = state.withLock { $0.cursor }
        var ids = Set<ManagedObjectID>()
        for transaction in page where transaction.token > cursor && !transaction.isFromThisProcess && !transaction.isEmpty {
            ids.formUnion(transaction.inserted)
            ids.formUnion(transaction.updated)
            if ids.count > Self.maximumRowsReadAhead { return nil }
        }
        return ids.isEmpty ? nil : ids
    }

    /// The rows that the doorbells waiting for the ledger say its next transactions from other
    /// processes inserted or updated: a server store reads them in the page's own statement.
    /// Only a hint, which costs nothing when wrong: the rows merged are those of the objects the
    /// ledger names; rows of objects it does not name are dropped, and those it names beyond the
    /// hint are read after the page. None past ``maximumRowsReadAhead`` objects.
    private static func expectedRows(_ claims: [Int64: Doorbell], after cursor: Int64) -> Set<ManagedObjectID> {
        var ids = Set<ManagedObjectID>()
        for (token, doorbell) in claims where token > cursor && doorbell.instanceID != ProcessInstance.id {
            guard let claim = doorbell.claim else { continue }
            ids.formUnion(claim.inserted)
            ids.formUnion(claim.updated)
            if ids.count > maximumRowsReadAhead { return [] }
        }
        return ids
    }

    private func check(_ doorbell: Doorbell, against transaction: HistoryTransaction, _ s: inout State) {
        if let instance = doorbell.instanceID, instance != (transaction.instanceID ?? 0) {
            return reject(token: transaction.token, reason: "the ledger's transaction is another process's", &s)
        }
        if let claim = doorbell.claim,
            claim.inserted != transaction.inserted || claim.updated != transaction.updated || claim.deleted != transaction.deleted
        {
            reject(token: transaction.token, reason: "its object IDs differ from the ledger's", &s)
        }
    }

    /// A `foreignWrite` frame this process does not believe (its store is a file, which it
    /// watches itself): counted and logged with the other disagreements, nothing refreshed.
    func rejectForeignWrite() {
        state.withLock { s in reject(token: 0, reason: "a foreign-write report for a store on a file, which only this process's own check reports", &s) }
    }

    private func reject(token: Int64, reason: String, _ s: inout State) {
        SharingMetrics.doorbellsRejected.increment()
        s.rejected += 1
        s.rejectedSinceLog += 1
        let now = clock.now
        if let last = s.lastRejectionLog, now - last < .seconds(10) { return }
        Self.logger.warning(
            "ignored hub messages that disagree with the ledger (the ledger's transactions are merged, not the messages')",
            metadata: ["token": "\(token)", "reason": "\(reason)", "since-last-log": "\(s.rejectedSinceLog)", "rejected": "\(s.rejected)"])
        s.lastRejectionLog = now
        s.rejectedSinceLog = 0
    }

    private func historyExpired(after cursor: Int64) {
        // Without the head there is nowhere to continue from: refreshing now would only repeat at
        // every read. The next doorbell or check tries again.
        let current: Int64
        do {
            current = try coordinator.currentHistoryToken()
        } catch {
            Self.logger.error(
                "history after token \(cursor) was purged and the ledger's head cannot be read; retrying at the next doorbell or check",
                metadata: ["error": "\(error)"])
            return
        }
        state.withLock { s in
            s.cursor = max(s.cursor, current)
            s.claims = s.claims.filter { $0.key > s.cursor }
        }
        releaseWaiters()
        Self.logger.warning("history after token \(cursor) was purged; refreshing every object")
        refreshEverything(at: current)
    }

    /// What follows history this process can no longer read in order (purged, or a ledger put
    /// back): on the main queue, every object is read again and observers get one event with
    /// `historyExpired`, at `token`.
    private func refreshEverything(at token: Int64) {
        let main = self.main
        let events = self.events
        main.enqueue {
            Self.refreshAll(main)
            events.post(
                RemoteMergeEvent(
                    token: token, author: nil, processID: 0, instanceID: 0, inserted: [], updated: [], deleted: [],
                    refreshed: Set(main.registeredObjects.map(\.objectID)), invalidated: [], latency: 0, historyExpired: true))
        }
    }

    /// Checks that the ledger's head is not behind the cursor. It is only when the store was put
    /// back to an earlier state by other means than Ambar's restore (`pg_restore`, a file copied
    /// over it in place): the tokens after the head will then name other transactions than the
    /// ones merged. That is handled as expired history — the cursor moves back to the head, every
    /// object is read again, and observers get an event with `historyExpired` — rather than
    /// skipping the reused tokens in silence. A head that cannot be read is left to the next check.
    func checkHeadNotBehindCursor() {
        let cursor = state.withLock { $0.cursor }
        let head: Int64
        do {
            head = try coordinator.currentHistoryToken()
        } catch {
            // The ledger read just before failed the same way and said so; the next check retries.
            Self.logger.debug("the ledger's head cannot be read; checked again at the next check", metadata: ["error": "\(error)"])
            return
        }
        guard head < cursor else { return }
        state.withLock { s in
            s.cursor = min(s.cursor, head)
            s.claims = [:]
        }
        releaseWaiters()
        Self.logger.warning(
            "the ledger's head is behind this process's position: the store was put back to an earlier state by other means than Ambar's restore; refreshing every object",
            metadata: ["position": "\(cursor)", "head": "\(head)"])
        refreshEverything(at: head)
    }

    /// Re-reads every object of the main context (on its queue); a failure is logged, since the
    /// objects may then be stale until the next change.
    static func refreshAll(_ main: ManagedObjectContext) {
        do throws(AmbarError) {
            try main.refreshAllObjects()
        } catch {
            logger.error("refreshing the main context failed; its objects may be stale until the next change: \(error)")
        }
    }

    // MARK: - Merging

    /// Queues the merge of one transaction into the main context and the event that follows it.
    /// Called under the state lock, in ledger order. Transactions queued while a merge is already
    /// waiting for the main queue join it: a receiver that fell behind merges its backlog in one
    /// pass, so it always catches up, and the main queue holds one merge block, not one per
    /// transaction.
    private func enqueueMerge(_ s: inout State, _ pending: PendingMerge) {
        s.mergesQueued += 1
        s.pendingMerges.append(pending)
        guard !s.mergeScheduled else { return }
        s.mergeScheduled = true
        main.enqueue { [self] in mergePending() }
    }

    /// On the main queue: merges every pending transaction at once, then posts one event per
    /// transaction, in ledger order.
    private func mergePending() {
        let batch = state.withLock { s -> [PendingMerge] in
            defer {
                s.pendingMerges = []
                s.mergeScheduled = false
            }
            s.merging = s.pendingMerges.first?.transaction.token
            return s.pendingMerges
        }
        defer {
            state.withLock { $0.merging = nil }
            releaseWaiters()
        }
        guard !batch.isEmpty else { return }
        let combined: DidSaveNotification
        if batch.count == 1 {
            combined = batch[0].transaction.notification
        } else {
            // Later transactions win: an object deleted by any of them is gone (IDs are never reused).
            var inserted = Set<ManagedObjectID>()
            var updated = Set<ManagedObjectID>()
            var deleted = Set<ManagedObjectID>()
            for pending in batch {
                inserted.formUnion(pending.transaction.inserted)
                updated.formUnion(pending.transaction.updated)
                deleted.formUnion(pending.transaction.deleted)
            }
            combined = DidSaveNotification(
                inserted: inserted.subtracting(deleted), updated: updated.subtracting(deleted), deleted: deleted,
                author: batch.last?.transaction.author, token: batch.last?.transaction.token)
        }
        // Each page's rows once, later pages' replacing earlier ones.
        var rows = PrefetchedRows()
        var lastPage: Int?
        for pending in batch where pending.page != lastPage {
            rows.add(pending.rows)
            lastPage = pending.page
        }
        let span = startSpanIfTracing("ambar.merge")
        span?.attributes["ambar.transactions"] = batch.count
        if let last = batch.last { span?.attributes["ambar.token"] = last.transaction.token }
        let change = main.mergeChanges(fromContextDidSave: combined, prefetched: rows)
        span?.end()
        if !change.notReread.isEmpty { remergeLater(change.notReread) }
        let now = Date()
        for pending in batch {
            let t = pending.transaction
            SharingMetrics.merged(latency: now.timeIntervalSince(t.timestamp))
            events.post(
                RemoteMergeEvent(
                    token: t.token, author: t.author, processID: t.processID, instanceID: t.instanceID ?? 0,
                    inserted: t.inserted, updated: t.updated, deleted: t.deleted,
                    refreshed: batch.count == 1 ? change.refreshed : change.refreshed.intersection(t.updated),
                    invalidated: batch.count == 1 ? change.invalidated : change.invalidated.intersection(t.updated.union(t.deleted)),
                    latency: max(0, now.timeIntervalSince(t.timestamp)), historyExpired: false))
        }
    }

    /// Merges `ids` again as updated, after a pause (0.1 s doubling to 5 s while it keeps
    /// failing): the store could not be read when their transaction was merged (a server out of
    /// reach for a moment), and the ledger's cursor has moved past it.
    private func remergeLater(_ ids: Set<ManagedObjectID>, after delay: TimeInterval = 0.1) {
        let main = self.main
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let follower = self else { return }
            main.enqueue {
                guard !follower.state.withLock({ $0.stopped }) else { return }
                let change = main.mergeChanges(fromContextDidSave: DidSaveNotification(inserted: [], updated: ids, deleted: [], author: nil, token: nil))
                if !change.notReread.isEmpty { follower.remergeLater(change.notReread, after: min(delay * 2, 5)) }
            }
        }
    }

    // MARK: - Position

    /// Records this process's merge position in the store, with its lease: when it moved (at most
    /// once a second), and at least every quarter of the lease anyway so that purging knows the
    /// process is alive. A write that waits for the write lock up to ``positionLockWait``: call it
    /// where that is acceptable (the periodic check's queue).
    ///
    /// What is not recorded is retried at every check. A failure (a full disk, a server out of
    /// reach) is a warning when it starts or changes. A lock that another connection holds past
    /// ``positionLockWait`` (a long transaction) is normal for a while: it is a warning only once
    /// the position has gone unrecorded for a quarter of the lease (three quarters are left).
    func recordPosition(force: Bool) {
        let now = clock.now
        let (cursor, due) = state.withLock { s -> (Int64, Bool) in
            let age = s.lastCursorWrite.map { now - $0 } ?? .seconds(Int64.max / 4)
            let due = force || (s.cursor != s.lastCursorWritten && age >= .seconds(1)) || age >= heartbeat
            if due {
                s.lastCursorWrite = now
                s.lastCursorWritten = s.cursor
            }
            return (s.cursor, due)
        }
        guard due else { return }
        let failure: String
        var busy = false
        do {
            if try coordinator.setHistoryCursor(consumer: positionName, token: cursor, lease: lease, lockWait: Self.positionLockWait) {
                let recovered = state.withLock { s -> Bool in
                    s.lastRecorded = clock.now
                    defer { s.positionFailure = nil }
                    return s.positionFailure != nil
                }
                if recovered {
                    Self.logger.notice("recording the merge position works again")
                }
                return
            }
            failure = "another connection held the store's write lock for over \(Self.positionLockWait) s"
            busy = true
        } catch {
            failure = "\(error)"
        }
        let (warn, unrecorded) = state.withLock { s -> (Bool, Duration) in
            s.lastCursorWrite = nil
            let unrecorded = s.lastRecorded.map { now - $0 } ?? .zero
            guard !busy || unrecorded >= heartbeat, s.positionFailure != failure else { return (false, unrecorded) }
            s.positionFailure = failure
            return (true, unrecorded)
        }
        if warn {
            Self.logger.warning(
                "could not record the merge position (not recorded for \(unrecorded.components.seconds) s); retrying at every check (logged again when this changes). Once its lease runs out, purging may remove history this process has not merged yet (it then refreshes every object)",
                metadata: ["error": "\(failure)", "lease-seconds": "\(lease)"])
        } else if busy {
            Self.logger.debug("the merge position waits for the store's write lock; retrying at the next check", metadata: ["error": "\(failure)"])
        }
    }

    /// Stops following: later doorbells are ignored, and the merge position is removed (nothing
    /// resumes from it; if removing fails — the write lock not free within ``positionLockWait``,
    /// for one — purging removes it once its lease has run out).
    func stop() {
        state.withLock { $0.stopped = true }
        waiters.closeAll()
        do {
            if try !coordinator.removeHistoryCursor(consumer: positionName, lockWait: Self.positionLockWait) {
                Self.logger.warning(
                    "could not remove the merge position at stop: another connection held the store's write lock for over \(Self.positionLockWait) s; purging removes it once its lease has run out",
                    metadata: ["lease-seconds": "\(lease)"])
            }
        } catch {
            Self.logger.warning(
                "could not remove the merge position at stop; purging removes it once its lease has run out",
                metadata: ["error": "\(error)", "lease-seconds": "\(lease)"])
        }
    }
}
