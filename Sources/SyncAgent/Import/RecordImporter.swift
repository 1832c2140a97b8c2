import AmbarCore
import AmbarDataStack
import Foundation
import RecordImport

/// What to do with a line that cannot be imported.
enum OnError: String, CaseIterable, Sendable {
    /// Stop: nothing of the failing batch is written; earlier batches stay.
    case abort
    /// Report the line and import the rest.
    case skip
}

/// What to do with a line whose relationship names an object that does not exist.
enum OnMissing: String, CaseIterable, Sendable {
    /// The line is in error at once (and `OnError` applies).
    case error
    /// The line waits: it is imported after the rest of the file, once a later line has made the
    /// object, and is in error only if no line does.
    case wait
}

/// The outcome of an import.
struct ImportReport {
    var lines = 0
    var inserted = 0
    var updated = 0
    var skipped: [ImportLineError] = []
    var tokens: [Int64] = []
    /// Set when the import stopped (`--on-error abort`): the error and the first line not written.
    var abortedBy: ImportLineError?
    var firstUnwrittenLine: Int?
    /// Lines that waited for objects (`--missing wait`) and were not written because the import
    /// stopped: for one of them, when no line of the file made its object (every other line was
    /// written then), or for an error of a later line.
    var unwrittenWaiting: [Int] = []
    var seconds: TimeInterval = 0

    var json: [String: Any] {
        [
            "lines": lines, "inserted": inserted, "updated": updated, "skipped": skipped.count,
            "errors": (skipped + (abortedBy.map { [$0] } ?? [])).map(\.json), "tokens": tokens,
            "aborted": abortedBy != nil, "seconds": seconds,
        ]
    }
}

/// Imports NDJSON into one entity through importer contexts, in batches: each batch is fetched by
/// key, upserted and saved in one transaction.
struct RecordImporter {
    let stack: DataStack
    let decoder: ImportRecordDecoder
    var batchSize = 1000
    var onError = OnError.abort
    var onMissing = OnMissing.error
    var author = "sync-agent import"

    /// Imports every line of `source`. With `idempotencyKey` (only for a single batch), the save
    /// happens at most once for that key. `progress` is called after each batch.
    /// `heartbeat` is called every 1,000 lines read, for watchdogs.
    func run(
        _ source: LineSource, idempotencyKey: String? = nil,
        heartbeat: () -> Void = {}, progress: (ImportReport) -> Void = { _ in }
    ) throws -> ImportReport {
        let started = ContinuousClock.now
        var report = ImportReport()
        var batch: [ImportRecord] = []
        var waiting: [Waiting] = []
        func flush() throws -> Bool {
            defer { batch.removeAll(keepingCapacity: true) }
            guard !batch.isEmpty else { return true }
            let ok = try save(batch, into: &report, idempotencyKey: idempotencyKey, waiting: &waiting)
            progress(report)
            return ok
        }
        while true {
            let line: Result<ImportRecord, ImportLineError>
            do {
                guard let (number, text) = try source.next() else { break }
                do throws(ImportLineError) { line = .success(try decoder.decode(text, line: number)) } catch { line = .failure(error) }
            } catch let tooLong as ImportLineError {
                line = .failure(tooLong)
            }
            report.lines += 1
            if report.lines % 1000 == 0 { heartbeat() }
            switch line {
            case .success(let record):
                batch.append(record)
            case .failure(let error):
                if onError == .skip {
                    report.skipped.append(error)
                } else {
                    report.abortedBy = error
                    report.firstUnwrittenLine = batch.first?.line ?? error.line
                }
            }
            if report.abortedBy != nil { break }
            if batch.count >= batchSize, try !flush() { break }
        }
        if report.abortedBy == nil, try flush() { try importWaiting(&waiting, into: &report, progress: progress) }
        if report.abortedBy != nil { report.unwrittenWaiting += waiting.map(\.record.line).sorted() }
        report.seconds = (ContinuousClock.now - started).inSeconds
        return report
    }

    /// A line held back (`--missing wait`) because it names an object no line has made yet.
    struct Waiting {
        let record: ImportRecord
        let error: ImportLineError
    }

    /// Imports the lines that waited, in passes, for as long as a pass imports some (a line may
    /// wait for another waiting line); the lines still waiting then are in error.
    private func importWaiting(_ waiting: inout [Waiting], into report: inout ImportReport, progress: (ImportReport) -> Void) throws {
        while !waiting.isEmpty {
            let pass = waiting
            waiting = []
            for start in stride(from: 0, to: pass.count, by: batchSize) {
                let chunk = pass[start..<min(start + batchSize, pass.count)].map(\.record)
                guard try save(chunk, into: &report, idempotencyKey: nil, waiting: &waiting) else { return }
                progress(report)
            }
            guard waiting.count == pass.count else { continue }
            // No line of this pass found its objects: no later pass will.
            let errors = waiting.sorted { $0.record.line < $1.record.line }.map(\.error)
            if onError == .skip {
                report.skipped += errors
            } else {
                report.abortedBy = errors.first
                report.firstUnwrittenLine = errors.first?.line
                report.unwrittenWaiting = errors.map(\.line)
            }
            waiting = []
        }
    }

    /// Saves one batch; returns false when the import must stop (abort mode). With
    /// `--missing wait`, lines naming objects that do not exist yet go to `waiting` and the rest
    /// of the batch is saved without them.
    private func save(_ batch: [ImportRecord], into report: inout ImportReport, idempotencyKey: String?, waiting: inout [Waiting]) throws -> Bool {
        var batch = batch
        while true {
            do {
                return try saveOnce(batch, into: &report, idempotencyKey: idempotencyKey, waiting: &waiting)
            } catch let held as HeldBack {
                // Without them, other lines of the batch may name what they would have made:
                // those wait too, found by the next attempt.
                waiting += batch.compactMap { record in held.errors[record.line].map { Waiting(record: record, error: $0) } }
                batch.removeAll { held.errors[$0.line] != nil }
                if batch.isEmpty { return true }
            }
        }
    }

    /// Lines of a batch that name objects that do not exist yet, by line: the batch was not saved.
    private struct HeldBack: Error {
        let errors: [Int: ImportLineError]
    }

    /// Saves one batch as it is; returns false when the import must stop (abort mode). Throws
    /// ``HeldBack`` when lines wait for objects.
    private func saveOnce(_ batch: [ImportRecord], into report: inout ImportReport, idempotencyKey: String?, waiting: inout [Waiting]) throws -> Bool {
        do {
            let outcome = try apply(batch, idempotencyKey: idempotencyKey)
            report.inserted += outcome.inserted
            report.updated += outcome.updated
            if let token = outcome.token { report.tokens.append(token) }
            return true
        } catch let failure as BatchFailure {
            if onError == .abort || batch.count == 1 {
                if onError == .skip {
                    report.skipped.append(failure.error)
                    return true
                }
                report.abortedBy = failure.error
                report.firstUnwrittenLine = batch.first?.line
                return false
            }
            // Skip mode: find the bad lines by saving the batch one record at a time.
            for record in batch {
                _ = try save([record], into: &report, idempotencyKey: nil, waiting: &waiting)
            }
            return true
        }
    }

    /// A batch that could not be saved, attributed to a line where possible.
    struct BatchFailure: Error { let error: ImportLineError }

    private func apply(_ batch: [ImportRecord], idempotencyKey: String?) throws -> (inserted: Int, updated: Int, token: Int64?) {
        let context = try stack.importerContext()
        context.transactionAuthor = author
        let decoder = self.decoder
        return try context.performAndWait { () throws -> (Int, Int, Int64?) in
            // What the store did, as the did-save reports it: an insert that a uniqueness
            // constraint resolved to an existing row counts as an update there.
            let saved = SavedOutcome()
            // Only objects of the imported entity count: setting a relationship also updates the
            // related objects through the inverse.
            let counted = decoder.importedEntities
            let observation = context.observeDidSave { note in
                saved.value = (
                    note.token, note.inserted.filter { counted.contains($0.entityName) }.count,
                    note.updated.filter { counted.contains($0.entityName) }.count
                )
            }
            defer { observation.cancel() }
            var existing: [AttributeValue: ManagedObject] = [:]
            if let keyAttribute = decoder.keyAttribute {
                let keys = Array(Set(batch.compactMap(\.key)))
                for start in stride(from: 0, to: keys.count, by: 500) {
                    let chunk = Array(keys[start..<min(start + 500, keys.count)])
                    var request = FetchRequest<ManagedObject>(entityName: decoder.entityName)
                    request.predicate = .isIn(key: keyAttribute, values: chunk, options: [])
                    for object in try context.fetch(request) {
                        existing[try object.value(forKey: keyAttribute)] = object
                    }
                }
            }
            var lineOf: [ObjectIdentifier: Int] = [:]
            var withReferences: [(ImportRecord, ManagedObject)] = []
            for record in batch {
                let object: ManagedObject
                if let key = record.key, let found = existing[key] {
                    object = found
                } else {
                    do throws(ImportLineError) { try decoder.checkComplete(record) } catch { throw BatchFailure(error: error) }
                    object = try context.insertObject(entityName: decoder.entityName)
                    if let key = record.key { existing[key] = object }
                }
                lineOf[ObjectIdentifier(object)] = record.line
                for (name, value) in record.values.sorted(by: { $0.key < $1.key }) {
                    do throws(AmbarError) { try object.setValue(value, forKey: name) } catch {
                        throw BatchFailure(error: ImportLineError(line: record.line, field: name, reason: error.description))
                    }
                }
                if !record.references.isEmpty { withReferences.append((record, object)) }
            }
            // Relationships last, so that a line can name an object a later line of the batch makes.
            if !withReferences.isEmpty {
                var resolver = ImportReferenceResolver(context: context, targets: decoder.relationships)
                var held: [Int: ImportLineError] = [:]
                do {
                    try resolver.prefetch(withReferences.map(\.0))
                    for (record, object) in withReferences {
                        do {
                            try resolver.apply(record, to: object)
                        } catch let missing as ImportReferenceResolver.MissingReference {
                            guard onMissing == .wait else { throw missing.error }
                            held[record.line] = missing.error
                        }
                    }
                } catch let error as ImportLineError {
                    throw BatchFailure(error: error)
                }
                if !held.isEmpty {
                    try context.reset()
                    throw HeldBack(errors: held)
                }
            }
            do throws(AmbarError) {
                if let idempotencyKey { try context.save(idempotencyKey: idempotencyKey) } else { try context.save() }
            } catch {
                // try?: cleanup; the save's own error is handled below
                try? context.rollback()
                // Only what is wrong with the data is the lines' fault. Already imported (an
                // earlier run committed this key), a busy, full, read-only or failing store, a
                // conflict with a concurrent writer: the lines are fine, the save may succeed later.
                guard Self.isDataError(error) else { throw error }
                throw BatchFailure(error: Self.attribute(error, lines: batch.map(\.line), lineOf: lineOf, context: context))
            }
            try context.reset()
            // No did-save: nothing changed (existing objects that got the same values are not updates).
            guard let outcome = saved.value else { return (0, 0, nil) }
            return (outcome.inserted, outcome.updated, outcome.token)
        }
    }

    /// Whether a save failed because of the records themselves (validation, a uniqueness
    /// constraint, a type or a reference that does not fit the model), as opposed to the store or
    /// the moment (storage errors, conflicts, a store changed under the process).
    static func isDataError(_ error: AmbarError) -> Bool {
        switch error {
        case .validation, .constraintViolation, .typeMismatch, .deleteDenied, .unknownProperty, .unknownEntity, .invalidObjectID, .invalidArgument:
            return true
        default:
            return false
        }
    }

    /// Names the line a save error is about, when the error names an object of this batch.
    private static func attribute(_ error: AmbarError, lines: [Int], lineOf: [ObjectIdentifier: Int], context: ManagedObjectContext) -> ImportLineError {
        let range = lines.count == 1 ? "line \(lines[0])" : "lines \(lines.first ?? 0)–\(lines.last ?? 0)"
        let first = lines.first ?? 0
        switch error {
        case .validation(let object, let property, let reason):
            let line = context.registeredObject(for: object).flatMap { lineOf[ObjectIdentifier($0)] } ?? first
            return ImportLineError(line: line, field: property, reason: reason)
        case .constraintViolation(_, let attributes, let values, _):
            return ImportLineError(
                line: first, field: attributes.joined(separator: ","), reason: "\(range): the values \(values) are already taken (\(error.description))")
        default:
            return ImportLineError(line: first, field: nil, reason: "\(range) could not be saved: \(error.description)")
        }
    }
}

/// The token and counts a did-save reported (posted synchronously on the saving context's queue).
private final class SavedOutcome: Sendable {
    private let storage = Locked<(token: Int64?, inserted: Int, updated: Int)?>(nil)
    var value: (token: Int64?, inserted: Int, updated: Int)? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
