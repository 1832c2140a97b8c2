import Foundation

/// The one error type AmbarStack throws. Each case says what went wrong and, in its
/// ``description``, what to do about it.
///
/// Every throwing API declares it (`throws(AmbarError)`), so a `do throws(AmbarError)` block can
/// catch cases by pattern:
///
/// ```swift
/// do throws(AmbarError) {
///     try importer.save()
/// } catch .constraintViolation(let entity, let attributes, _, let existing) {
///     // Another object holds the unique value; nothing was written.
///     print("\(entity).\(attributes) is taken by \(existing?.uriString ?? "an object of this save")")
/// } catch {
///     print(error)  // what went wrong, what state remains, what to do
/// }
/// ```
public enum AmbarError: Error, Sendable, Equatable {
    /// The model is not valid; the reason names the entity and property.
    case invalidModel(String)
    /// No entity of that name exists in the model.
    case unknownEntity(String)
    /// The entity has no property of that name.
    case unknownProperty(entity: String, property: String)
    /// A value of the wrong type was given for an attribute.
    case typeMismatch(entity: String, property: String, expected: AttributeType, got: String)
    /// An object failed validation at save: the object, the property and why.
    case validation(object: ManagedObjectID, property: String, reason: String)
    /// A delete was refused by a `deny` delete rule.
    case deleteDenied(object: ManagedObjectID, relationship: String)
    /// A uniqueness constraint was violated.
    case constraintViolation(entity: String, attributes: [String], values: [AttributeValue], existing: ManagedObjectID?)
    /// Optimistic locking found objects changed by someone else since they were read.
    case mergeConflict([MergeConflict])
    /// The store file could not be opened; `cause` is the error underneath, when there is one.
    case storeCannotOpen(path: String, reason: String, cause: ErrorCause? = nil)
    /// The store file is damaged: not a database, or failing SQLite's integrity check. Nothing was
    /// changed; opening with ``DamagedStoreRecovery/quarantine`` moves it aside and starts afresh.
    case storeDamaged(path: String, reason: String)
    /// The store was created with a different model.
    case incompatibleModel(storeHash: String, modelHash: String)
    /// The store's model and this model differ in ways a lightweight migration cannot bridge;
    /// each reason names the element. Nothing was changed.
    case migrationRefused(reasons: [String])
    /// Another process migrated the store to a newer model than this process uses; nothing was
    /// written.
    case storeMigrated(storeHash: String, modelHash: String)
    /// No object with this ID exists (in the context or the store).
    case objectNotFound(ManagedObjectID)
    /// An object ID or URI is not valid here (malformed, or of another store).
    case invalidObjectID(String)
    /// A method was called off the context's queue.
    case wrongQueue(context: String, operation: String)
    /// The object belongs to another context, or to none.
    case foreignObject(ManagedObjectID, operation: String)
    /// A predicate or sort cannot be evaluated as written.
    case invalidPredicate(String)
    /// A fetch request is not valid.
    case invalidFetchRequest(String)
    /// An `NSPredicate` format string could not be parsed: the format, the character offset
    /// (from 0) where parsing stopped, and why.
    case invalidPredicateFormat(format: String, position: Int, reason: String)
    /// A transformable attribute's value could not be turned into bytes or back; `cause` is the
    /// transformer's or decoder's error, when there is one.
    case transformationFailed(entity: String, property: String, transformer: String, reason: String, cause: ErrorCause? = nil)
    /// The context refuses to save (temporary or read-only contexts).
    case saveRefused(context: String, reason: String)
    /// The store was deleted; the stack cannot save any more.
    case storeDeleted
    /// The file at the store's path is no longer the store this process opened: it was replaced
    /// (a backup restored with `mv`, `sync-agent restore`) or removed. Nothing was written; open
    /// the store again (a service: exit non-zero and let the service manager restart it).
    case storeReplaced(path: String)
    /// The stack's setup has not finished (or failed); its contexts are not usable yet.
    case stackNotReady
    /// The ledger no longer holds the changes after this token: they were purged. Refresh fully,
    /// then continue from the current token.
    case historyExpired(after: Int64, purgedThrough: Int64)
    /// No model file of that name was found.
    case modelNotFound(name: String, searched: [String])
    /// A save with this idempotency key already committed (as transaction `token`); nothing was
    /// written again.
    case alreadySaved(idempotencyKey: String, token: Int64)
    /// A save that moves a durable consumer's position found it elsewhere than where this
    /// process last read it (`found` is `nil` when the consumer was removed): another process
    /// running the same consumer recorded it first, or an operator removed the consumer. Nothing
    /// was written; read the position again and continue from there.
    case consumerPositionMoved(consumer: String, expected: Int64?, found: Int64?)
    /// A durable consumer's name is the name of a sharing process's merge position (a leased
    /// cursor, `SharingConfiguration.mergePositionName`), which a durable consumer can neither
    /// move nor take over. Nothing was written; name the consumer differently, or remove that
    /// position once its process is gone.
    case consumerNameTaken(consumer: String, lease: TimeInterval)
    /// This process no longer owns durable consumer `consumer`: its ownership lease lapsed and
    /// `holder` took it (or an operator removed the consumer: `holder` is nil). Nothing was
    /// written; stop delivering, and stand by or end.
    case consumerLeaseLost(consumer: String, holder: String?)
    /// `consumer`'s position `position` is past the ledger's head `head`: the store was put back
    /// to an earlier state by other means than Ambar's restore (`pg_restore`, a copied file), so
    /// the tokens after `head` will name other transactions than the ones the consumer handled.
    /// Nothing was read or written; reconcile with the store as it is, then start the consumer
    /// afresh (remove its position). A `ChangeFeed` (a position kept outside the store) throws it
    /// with an empty `consumer`.
    case positionAheadOfLedger(consumer: String, position: Int64, head: Int64)
    /// Transaction `token` did not reach this process within `waited` seconds: the process holds
    /// every transaction through `heldThrough`. The token may be from another store, or from a
    /// save that has not committed; wait again, or read the store directly.
    case notMergedYet(token: Int64, heldThrough: Int64, waited: TimeInterval)
    /// An outbox message's idempotency key `key` is already in the store's outbox (a key given
    /// twice while the first message waits to be sent). Nothing of the save was written.
    case outboxKeyTaken(key: String)
    /// An argument cannot be used as given; the message says why and what to pass instead.
    case invalidArgument(String)
    /// The process has no file descriptor left for `operation` (`EMFILE`): its limit on open
    /// files (`limit`, -1 when unknown) is too low for what it does. Nothing was written.
    case tooManyOpenFiles(operation: String, limit: Int)
    /// The file system holding the store is full (or the store reached a size limit: a quota, or
    /// the process's file-size limit) during `operation`. Nothing was written; the context keeps
    /// its changes, so saving again once there is space loses nothing.
    case storeFull(path: String, operation: String)
    /// The store cannot be written because its file or file system is read-only. Nothing was
    /// written; the context keeps its changes.
    case storeReadOnly(path: String, reason: String)
    /// A statement failed: `code` is SQLite's result code, or 0 for PostgreSQL (whose SQLSTATE the
    /// message ends with); `cause` is the error underneath (GRDB's, postgres-nio's), when there is
    /// one.
    case storage(operation: String, code: Int32, message: String, cause: ErrorCause? = nil)
    /// The database server (PostgreSQL) could not be reached, dropped the connection, refused the
    /// credentials or answered something that is not its protocol. `server` names it without
    /// credentials; `cause` is the error underneath (postgres-nio's, NIO's), when there is one.
    case serverUnavailable(server: String, operation: String, reason: String, cause: ErrorCause? = nil)
}

extension AmbarError: CustomStringConvertible, LocalizedError {
    /// A message that says what went wrong and what to do.
    public var description: String {
        switch self {
        case .invalidModel(let reason):
            return "Invalid model: \(reason). Fix the model definition."
        case .invalidPredicateFormat(let format, let position, let reason):
            let marker = String(repeating: " ", count: max(0, position)) + "^"
            return
                "Cannot parse the predicate format at position \(position): \(reason).\n  \(format)\n  \(marker)\nFix the format string; nothing was fetched."
        case .transformationFailed(let entity, let property, let transformer, let reason, _):
            return
                "\(entity).\(property) could not be transformed with '\(transformer)': \(reason). Check that the registered transformer matches the stored bytes and the value's type."
        case .unknownEntity(let name):
            return "No entity named '\(name)' in the model. Check the spelling or add the entity to the model."
        case .unknownProperty(let entity, let property):
            return "Entity '\(entity)' has no property '\(property)'. Check the spelling or add it to the model."
        case .typeMismatch(let entity, let property, let expected, let got):
            return "\(entity).\(property) holds \(expected.rawValue) values; a \(got) value was given. Convert the value first."
        case .validation(let object, let property, let reason):
            return "Validation failed for \(object.uriString), property '\(property)': \(reason). Fix the object and save again; nothing was written."
        case .deleteDenied(let object, let relationship):
            return
                "Cannot delete \(object.uriString): its relationship '\(relationship)' has the deny rule and is not empty. Empty it first; nothing was written."
        case .constraintViolation(let entity, let attributes, let values, let existing):
            let pairs = zip(attributes, values).map { "\($0)=\($1)" }.joined(separator: ", ")
            let other = existing.map { " (already held by \($0.uriString))" } ?? ""
            return
                "Uniqueness constraint on \(entity)(\(attributes.joined(separator: ", "))) violated by \(pairs)\(other). Use a merge policy that resolves constraints (object or store trump) or change the values; nothing was written."
        case .mergeConflict(let conflicts):
            let list = conflicts.map(\.description).joined(separator: "; ")
            return
                "Merge conflict on \(conflicts.count) object(s): \(list). Another context or process changed them since they were read. Refresh them, or save with a merge policy other than .error; nothing was written."
        case .storeCannotOpen(let path, let reason, _):
            return "Cannot open the store at \(path): \(reason). Check the path, its permissions and that it is an Ambar SQLite store."
        case .incompatibleModel(let storeHash, let modelHash):
            return
                "The store was created with a different model (store \(storeHash), this program \(modelHash)). Open it with the model it was created with, or migrate it."
        case .storeDamaged(let path, let reason):
            return
                "The store at \(path) is damaged (\(reason)). It was left as it is: restore a backup, or open it with damaged-store recovery (.quarantine) to move it aside and start an empty store."
        case .migrationRefused(let reasons):
            return
                "The model changed in ways a lightweight migration cannot apply: \(reasons.joined(separator: "; ")). The store is untouched; keep the old model, or make the changes additive (new entities, optional or defaulted attributes, optional relationships, indexes)."
        case .storeMigrated(let storeHash, let modelHash):
            return
                "The store was migrated to a newer model (\(storeHash)) by another process; this process still uses \(modelHash). Nothing was written: restart it with the new version of the program."
        case .objectNotFound(let id):
            return "Object \(id.uriString) does not exist (it was deleted or never saved)."
        case .invalidObjectID(let reason):
            return "Invalid object ID: \(reason)."
        case .wrongQueue(let context, let operation):
            return "\(operation) was called off the queue of context '\(context)'. Wrap the call in context.perform { } or performAndWait { }."
        case .foreignObject(let id, let operation):
            return "\(operation): object \(id.uriString) belongs to another context (or none). Use context.object(with: id) to get this context's instance."
        case .invalidPredicate(let reason):
            return "Invalid predicate: \(reason)."
        case .invalidFetchRequest(let reason):
            return "Invalid fetch request: \(reason)."
        case .saveRefused(let context, let reason):
            return "Context '\(context)' does not save: \(reason). Its changes are kept in memory."
        case .storeDeleted:
            return "The store was deleted; this stack can no longer save. Create a new stack."
        case .storeReplaced(let path):
            return
                "The file at \(path) is no longer the store this process opened (it was replaced or removed, e.g. by a restore); nothing was written to it. Open the store again: restart the process."
        case .stackNotReady:
            return "The stack is not ready yet. Wait for its completion, `try await stack.load()`, or check `isReady` before using its contexts."
        case .historyExpired(let after, let purgedThrough):
            return
                "The change history after token \(after) was purged (through token \(purgedThrough)). Refresh every context fully, then read history from the current token."
        case .modelNotFound(let name, let searched):
            return
                "No model named '\(name)' was found (looked in: \(searched.joined(separator: ", "))). Put \(name).json in one of those directories or pass the directory."
        case .alreadySaved(let key, let token):
            return
                "A save with idempotency key '\(key)' already committed as transaction \(token); nothing was written again. Discard these changes (rollback) and move on."
        case .consumerPositionMoved(let consumer, let expected, let found):
            let was = expected.map { "at token \($0)" } ?? "not yet recorded"
            let now = found.map { "is at token \($0)" } ?? "was removed"
            return
                "Consumer '\(consumer)' \(now), not \(was) as this process read it: another process runs the same consumer, or it was removed. Nothing was written; read its position again and continue from there (or stop, if it was removed on purpose)."
        case .consumerNameTaken(let consumer, let lease):
            return
                "Consumer '\(consumer)' cannot record its position: '\(consumer)' names a sharing process's merge position (a leased cursor, lease \(Int(lease)) s), not a durable consumer's. Nothing was written. Give the durable consumer a name no sharing process uses as its merge position, or remove that position once its process is gone (`sync-agent consumers --remove \(consumer)`)."
        case .consumerLeaseLost(let consumer, let holder):
            let now = holder.map { "\($0) holds it now" } ?? "it was removed"
            return
                "This process no longer owns consumer '\(consumer)': its ownership lease lapsed (the process was paused or cut off from the store longer than the lease) and \(now). Nothing was written; this copy stops delivering and stands by."
        case .positionAheadOfLedger(let consumer, let position, let head) where consumer.isEmpty:
            return
                "The change feed is at token \(position), past the ledger's head \(head): the store was put back to an earlier state by other means than Ambar's restore (pg_restore, a copied file), and the tokens after \(head) will name other transactions. The feed ends. Reconcile with the store as it is (as after expired history), then follow from the head."
        case .positionAheadOfLedger(let consumer, let position, let head):
            return
                "Consumer '\(consumer)' is at token \(position), past the ledger's head \(head): the store was put back to an earlier state by other means than Ambar's restore (pg_restore, a copied file), and the tokens after \(head) will name other transactions. Nothing was read or written. Reconcile with the store as it is (as after expired history), then remove the position (`sync-agent consumers --remove \(consumer)`) and start the consumer again. `sync-agent restore` avoids this: the restored ledger continues past the old head."
        case .notMergedYet(let token, let heldThrough, let waited):
            return
                "Transaction \(token) did not reach this process within \(waited) s: it holds every transaction through token \(heldThrough). Check that the token comes from this store and that sharing runs; then wait again (a longer timeout), or read the store directly."
        case .outboxKeyTaken(let key):
            return
                "The outbox already holds a message with key '\(key)' that has not been sent: keys name one effect each. Nothing of the save was written. Give each message a key of its own, or none (the consumer, the token and the message's place are then the key)."
        case .invalidArgument(let reason):
            return "Invalid argument: \(reason)."
        case .tooManyOpenFiles(let operation, let limit):
            let limitText = limit < 0 ? "" : " (\(limit))"
            return
                "Too many open files during \(operation): the process's limit on open descriptors\(limitText) is too low. Raise it (LimitNOFILE= in the unit, `ulimit -n` in a shell; 1024 or more), then start again. Nothing was written."
        case .storeFull(let path, let operation):
            return
                "The disk holding the store at \(path) is full (or the store reached a size limit) during \(operation). Nothing was written and the store is intact; a context that was saving keeps its changes. Free some space and save again."
        case .storeReadOnly(let path, let reason):
            return
                "The store at \(path) cannot be written: \(reason). Nothing was written; a context that was saving keeps its changes. Make the file and its file system writable, then try again."
        case .storage(let operation, let code, let message, _):
            return
                "The store failed during \(operation) (code \(code)): \(message). Its transaction was rolled back, so nothing of it was kept; a context that was saving keeps its unsaved changes, and a read can be retried."
        case .serverUnavailable(let server, let operation, let reason, _):
            return
                "The database server \(server) failed during \(operation): \(reason). Check that the server runs and is reachable, then retry. Nothing is lost: a context keeps its unsaved changes; if this was a save, it may or may not have committed (the ledger tells, and a save with an idempotency key is safe to retry)."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}

/// One object in conflict at save: what the context had read, and what the store holds now.
public struct MergeConflict: Sendable, Equatable, CustomStringConvertible {
    /// The object in conflict.
    public let objectID: ManagedObjectID
    /// The row version the context had read (its snapshot).
    public let cachedVersion: Int64
    /// The row version in the store now; 0 means the row was deleted.
    public let currentVersion: Int64
    /// The values the context had read, by attribute name.
    public let cachedSnapshot: [String: AttributeValue]
    /// The values in the store now, by attribute name (empty when deleted).
    public let persistedSnapshot: [String: AttributeValue]

    /// A conflict on `objectID`, as a store detects it.
    package init(
        objectID: ManagedObjectID, cachedVersion: Int64, currentVersion: Int64, cachedSnapshot: [String: AttributeValue],
        persistedSnapshot: [String: AttributeValue]
    ) {
        self.objectID = objectID
        self.cachedVersion = cachedVersion
        self.currentVersion = currentVersion
        self.cachedSnapshot = cachedSnapshot
        self.persistedSnapshot = persistedSnapshot
    }

    /// A one-line summary: the object and both versions.
    public var description: String {
        "\(objectID.uriString) (read version \(cachedVersion), store version \(currentVersion)\(currentVersion == 0 ? ", deleted" : ""))"
    }
}
