import AmbarCore
import Foundation

/// One active copy per consumer name: the consumer holds its name with an ownership lease in the
/// store (``ChangeConsumer/Options/lease``), renewed at least every third of it while it runs;
/// another copy stands by, checking every ``ChangeConsumer/Options/checkInterval`` (or a third of
/// the lease when shorter), and takes over once the lease lapses or is released.
/// Every save and position move is fenced by the lease's epoch, so a copy that lost the lease
/// (paused or cut off past it) writes nothing and learns it before it delivers again.
extension ChangeConsumer {
    /// Whether this copy is standing by: another process holds the consumer (see
    /// ``activeOwner``), and this one takes over when that lease lapses.
    public var isStandingBy: Bool { state.withLock { $0.standingBy != nil } }

    /// The process that delivers this consumer's events, as this copy last saw it: this process
    /// while it is active, the holder while it stands by; nil before it first claimed.
    public var activeOwner: ConsumerOwner? { state.withLock { $0.ownership?.owner ?? $0.standingBy?.owner } }

    /// A new owner identity for a consumer of this process: its host and PID, and a start time
    /// no other consumer of the process was given (to the millisecond), so that two copies of a
    /// consumer in one process are two owners too.
    static func newOwner() -> ConsumerOwner {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let milliseconds = lastOwnerStart.withLock { last -> Int64 in
            last = max(now, last + 1)
            return last
        }
        let process = ConsumerOwner.thisProcess
        return ConsumerOwner(host: process.host, pid: process.pid, started: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The start time (ms) the last ``newOwner()`` was given.
    private static let lastOwnerStart = Locked<Int64>(0)

    /// The lease in seconds, as the store takes it.
    var leaseSeconds: Double {
        let (seconds, attoseconds) = options.lease.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// How often the active copy renews its lease and a standby checks it: a third of the lease.
    var renewalInterval: Duration { options.lease / 3 }

    /// The lease this copy holds, for a fenced save; throws when it holds none (it was lost).
    func heldOwnership() throws(AmbarError) -> ConsumerOwnership {
        guard let ownership = state.withLock({ $0.ownership }) else { throw .consumerLeaseLost(consumer: name, holder: nil) }
        return ownership
    }

    /// Returns true once this copy owns the consumer with a lease renewed within a third of it,
    /// standing by meanwhile; false when the consumer was stopped or its task cancelled first.
    ///
    /// - Throws: ``AmbarError/consumerLeaseLost(consumer:holder:)`` when this copy held the lease
    ///   and another has taken it since, and the store's errors.
    func holdOwnership() async throws(AmbarError) -> Bool {
        while true {
            let now = clock.now
            let (held, renewedAt) = state.withLock { ($0.ownership, $0.renewedAt) }
            if held != nil, let renewedAt, now - renewedAt < renewalInterval { return true }
            if Task.isCancelled || state.withLock({ $0.stopped }) { return false }
            let rings = signal.rings
            let (name, lease, owner) = (self.name, leaseSeconds, self.owner)
            let claim: ConsumerClaim
            do {
                claim = try await onQueue { [coordinator] () throws(AmbarError) in
                    try coordinator.claimConsumer(name, owner: owner, lease: lease)
                }
            } catch .serverUnavailable(let server, let operation, let reason, _) {
                // A database server out of reach, or a claim that waited past the statement
                // timeout for a row another copy's session still locks (a copy frozen inside a
                // transaction, until the server ends it): check again rather than end. Saves stay
                // fenced meanwhile, and what this copy held lapses by itself.
                noteUnreachable(true, detail: "\(server): \(operation): \(reason)")
                await waitForNextCheck(after: rings)
                continue
            }
            noteUnreachable(false, detail: "")
            switch claim {
            case .owned(let ownership):
                if let held, held.epoch != ownership.epoch {
                    // Another copy held it in between (and let it lapse): what this copy read
                    // before may have been handled there.
                    throw leaseLost(holder: "another copy, between epochs \(held.epoch) and \(ownership.epoch)", consumer: name)
                }
                let previous = state.withLock { s -> ConsumerOwnership? in
                    defer {
                        s.ownership = ownership
                        s.renewedAt = now
                        s.standingBy = nil
                    }
                    return s.standingBy
                }
                if held == nil {
                    Self.logger.notice(
                        previous == nil ? "consumer is active in this copy" : "the active copy's lease lapsed or was released; this copy takes over",
                        metadata: [
                            "consumer": "\(name)", "epoch": "\(ownership.epoch)", "lease": "\(options.lease)",
                            "previous-owner": "\(previous.map { "\($0.owner)" } ?? "none")",
                        ])
                }
                return true
            case .heldByAnother(let holder):
                if held != nil { throw leaseLost(holder: "\(holder.owner)", consumer: name) }
                let first = state.withLock { s -> Bool in
                    defer { s.standingBy = holder }
                    return s.standingBy?.owner != holder.owner
                }
                if first {
                    Self.logger.notice(
                        "consumer is active in another copy; this one stands by",
                        metadata: ["consumer": "\(name)", "active": "\(holder.owner)", "epoch": "\(holder.epoch)", "lease": "\(options.lease)"])
                }
                await waitForNextCheck(after: rings)
            }
        }
    }

    /// How often a standby checks the lease: every ``Options/checkInterval``, or a third of the
    /// lease when that is shorter, so that it takes over within a check of a release.
    var standbyInterval: Duration { min(renewalInterval, options.checkInterval) }

    /// Waits ``standbyInterval``, or until the consumer is stopped.
    private func waitForNextCheck(after rings: UInt64) async {
        let deadline = clock.now + standbyInterval
        var seen = rings
        while clock.now < deadline, !Task.isCancelled, !state.withLock({ $0.stopped }) {
            await signal.wait(after: seen, timeout: deadline - clock.now)
            seen = signal.rings
        }
    }

    /// Forgets the lease this copy held (another copy holds the consumer now) and returns the
    /// error that says so.
    func leaseLost(holder: String?, consumer: String) -> AmbarError {
        state.withLock { $0.ownership = nil }
        Self.logger.error(
            "this copy lost the consumer's ownership lease: it stops delivering", metadata: ["consumer": "\(consumer)", "holder": "\(holder ?? "none")"])
        return .consumerLeaseLost(consumer: consumer, holder: holder)
    }

    /// Gives up the lease this copy holds, so that a copy standing by takes over at once, or the
    /// record that it stands by. A release that fails is logged: the lease (or the record) then
    /// lapses by itself within ``Options/lease``.
    func releaseOwnership() async {
        let (held, wasStandingBy) = state.withLock { s -> (ConsumerOwnership?, Bool) in
            defer {
                s.ownership = nil
                s.standingBy = nil
            }
            return (s.ownership, s.standingBy != nil)
        }
        guard held != nil || wasStandingBy else { return }
        let (name, owner) = (self.name, self.owner)
        do {
            let released = try await onQueue { [coordinator] () throws(AmbarError) in try coordinator.releaseConsumer(name, owner: owner) }
            if let held {
                Self.logger.info(
                    released ? "consumer's ownership released" : "consumer's ownership had passed to another copy already",
                    metadata: ["consumer": "\(name)", "epoch": "\(held.epoch)"])
            }
        } catch {
            Self.logger.warning(
                "releasing the consumer's ownership failed; it lapses by itself",
                metadata: ["consumer": "\(name)", "lease": "\(options.lease)", "error": "\(error)"])
        }
    }
}
