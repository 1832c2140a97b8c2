import AmbarCore
import Foundation
import Logging

/// Keeps the results of a fetch request current as its context changes — by local edits, saves
/// and merges (from other contexts or other processes) — and reports what changed, with index
/// paths and section changes.
///
/// It reacts to objects-did-change notifications by evaluating the request's predicate in
/// memory on the changed objects only; it never refetches everything. Create it, call
/// ``performFetch()`` and read it on the context's queue.
///
/// ```swift
/// // On the main queue: open tasks by priority, then title, kept current as importers save
/// // and other processes' saves are merged.
/// let controller = try FetchedResultsController(
///     predicate: #Predicate<TaskItem> { !$0.done },
///     sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)],
///     context: try stack.mainContext)
/// controller.onChange = { changes in
///     for change in changes {
///         switch change {
///         case .insert(_, let at): print("+", controller.fetchedObjects[at.row].title)
///         case .delete(_, let at): print("-", at.row)
///         case .move(_, let from, let to): print(from.row, "→", to.row)
///         case .update(_, let at): print("~", controller.fetchedObjects[at.row].title)
///         case .insertSection, .deleteSection: break  // only with a sectionNameKeyPath
///         }
///     }
/// }
/// try controller.performFetch()
/// ```
public final class FetchedResultsController<T: ManagedObject> {
    /// The request whose results are kept.
    public let fetchRequest: FetchRequest<T>
    /// The context the results live in.
    public let context: ManagedObjectContext
    /// The key path that groups results into sections (sort on it first), if any.
    ///
    /// A change costs time in proportion to what changed when the key is an attribute of the
    /// results' own entity and the request's first sort key (without text options): sections
    /// are then edited in place. A key path through a relationship (`"department.name"`), whose
    /// value can change without the row, rebuilds the sections from the rows at each change.
    public let sectionNameKeyPath: String?
    /// Called on the context's queue with the changes, in the order a table view applies them:
    /// section deletes, object deletes, section inserts, object inserts, moves, updates.
    public var onChange: (([ResultsChange]) -> Void)?
    /// Called on the context's queue when the controller could not follow a change: a refetch
    /// after a reset or full refresh failed (the previous results are kept, not emptied), or the
    /// objects a merge inserted could not be loaded (a store on a server that is unreachable for
    /// a moment): those are loaded again with the next change, and on their own after 0.1 s,
    /// doubling to 5 s, until they load. The context's failure observers are told too.
    public var onError: ((AmbarError) -> Void)?

    /// The results, in order.
    public private(set) var fetchedObjects: [T] = []
    /// The results grouped by section.
    public private(set) var sections: [ResultsSection<T>] = []
    private var observation: ContextObservation?
    /// Merged inserts that could not be loaded yet, and the delay before the next try.
    private var unloadedInserts: Set<ManagedObjectID> = []
    private var retryDelay: TimeInterval = 0
    private var retryScheduled = false
    static var logger: Logger { Logger(label: "ambar.stack.results") }

    /// Creates a controller for `request` in `context`; nothing is fetched until ``performFetch()``.
    public init(fetchRequest: FetchRequest<T>, context: ManagedObjectContext, sectionNameKeyPath: String? = nil) {
        self.fetchRequest = fetchRequest
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
    }

    deinit { observation?.cancel() }

    /// Fetches the results and starts tracking changes.
    ///
    /// - Throws: whatever the fetch throws (``AmbarError``).
    public func performFetch() throws(AmbarError) {
        try context.checkQueue("performFetch")
        fetchedObjects = try context.fetch(fetchRequest)
        rebuildSections()
        if observation == nil {
            let box = UncheckedBox(self)
            observation = context.observeObjectsDidChange { note in
                box.value?.contextDidChange(note)
            }
        }
    }

    /// The object at `indexPath`, if it is in range.
    public func object(at indexPath: ResultsIndexPath) -> T? {
        guard sections.indices.contains(indexPath.section),
            sections[indexPath.section].objects.indices.contains(indexPath.row)
        else { return nil }
        return sections[indexPath.section].objects[indexPath.row]
    }

    /// Where `object` is in the results, if it is.
    public func indexPath(for object: T) -> ResultsIndexPath? {
        positions()[object.objectID]
    }

    // MARK: - Tracking

    /// The name of `object`'s section ("" without a section key path). A value that cannot be
    /// read (a fault whose row cannot be loaded) is reported to the context's failure observers
    /// and `onError`, and the row shows in the unnamed section until the results are fetched
    /// again.
    private func sectionName(_ object: ManagedObject) -> String {
        guard let keyPath = sectionNameKeyPath else { return "" }
        let value: AttributeValue
        do {
            (_, value) = try PredicateEvaluation.resolveAttribute(keyPath, on: object)
        } catch {
            fail(
                ContextFailure(
                    operation: "read the section name of a result (shown in the unnamed section)", object: object.objectID, property: keyPath, error: error))
            return ""
        }
        switch value {
        case .null: return ""
        case .string(let s): return s
        default: return value.description
        }
    }

    private func rebuildSections() {
        var result: [ResultsSection<T>] = []
        var currentName: String?
        var current: [T] = []
        for object in fetchedObjects {
            let name = sectionName(object)
            if name != currentName, let open = currentName {
                result.append(ResultsSection(name: open, objects: current))
                current = []
            }
            currentName = name
            current.append(object)
        }
        if let open = currentName { result.append(ResultsSection(name: open, objects: current)) }
        sections = result
    }

    private func positions() -> [ManagedObjectID: ResultsIndexPath] {
        var map: [ManagedObjectID: ResultsIndexPath] = [:]
        for (s, section) in sections.enumerated() {
            for (r, object) in section.objects.enumerated() { map[object.objectID] = ResultsIndexPath(row: r, section: s) }
        }
        return map
    }

    private func isCandidate(_ id: ManagedObjectID) -> Bool {
        guard let layout = context.layoutIfKnown(id.entityName) else { return false }
        return fetchRequest.includesSubentities ? layout.isKind(of: fetchRequest.entityName) : layout.name == fetchRequest.entityName
    }

    /// Tries the unloaded inserts again after a delay (0.1 s doubling to 5 s), on the context's
    /// queue, until they load.
    private func scheduleRetry() {
        guard !retryScheduled else { return }
        retryScheduled = true
        retryDelay = retryDelay == 0 ? 0.1 : min(retryDelay * 2, 5)
        let box = UncheckedBox(self)
        let context = self.context
        DispatchQueue.global().asyncAfter(deadline: .now() + retryDelay) {
            context.enqueue {
                guard let controller = box.value else { return }
                controller.retryScheduled = false
                guard !controller.unloadedInserts.isEmpty else { return }
                controller.apply(changed: [], gone: [])
            }
        }
    }

    private func fail(_ failure: ContextFailure) {
        context.report(failure)
        onError?(failure.error)
    }

    fileprivate func contextDidChange(_ note: ObjectsDidChangeNotification) {
        if note.invalidatedAll || note.refreshedAll {
            let old = sections
            let oldPositions = positions()
            do {
                fetchedObjects = try context.fetch(fetchRequest)
            } catch {
                // The previous results stay (an empty list would be a lie too); the caller is told.
                fail(
                    ContextFailure(
                        operation: "refetch results after a reset or full refresh (the previous results are kept)", object: nil, property: nil, error: error))
                if note.invalidatedAll { fetchedObjects = [] }
                rebuildSections()
                report(old: old, oldPositions: oldPositions, changed: note.invalidatedAll ? Set(oldPositions.keys) : [])
                return
            }
            rebuildSections()
            unloadedInserts = []
            let changed = note.invalidatedAll ? Set(oldPositions.keys).union(fetchedObjects.map(\.objectID)) : note.refreshed
            report(old: old, oldPositions: oldPositions, changed: changed)
            return
        }
        apply(changed: note.inserted.union(note.updated).union(note.refreshed), gone: note.deleted.union(note.invalidated))
    }

    /// Applies changed and removed objects to the results (merged inserts that could not be
    /// loaded before are tried again).
    private func apply(changed changedIDs: Set<ManagedObjectID>, gone: Set<ManagedObjectID>) {
        unloadedInserts.subtract(gone)
        var changed = changedIDs.union(unloadedInserts).subtracting(gone).filter(isCandidate)
        guard !changed.isEmpty || gone.contains(where: isCandidate) else { return }
        if fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0 { return refetchWindow(changed: changed) }

        // Objects for the changed IDs: registered ones directly, the rest (merged inserts) in one
        // fetch by ID.
        var candidates: [T] = []
        var unknown: [ManagedObjectID] = []
        for id in changed {
            if let object = context.registeredObject(for: id) {
                if let typed = object as? T, typed.lifecycle != .deleted, typed.lifecycle != .invalidated { candidates.append(typed) }
            } else {
                unknown.append(id)
            }
        }
        if !unknown.isEmpty {
            var byID = fetchRequest
            byID.predicate = .objectIn(unknown)
            byID.sortDescriptors = []
            byID.fetchLimit = 0
            byID.fetchOffset = 0
            do {
                candidates += try context.fetch(byID)
                // Loaded, or gone from the store (never to be shown).
                unloadedInserts.subtract(unknown)
                retryDelay = 0
            } catch {
                unloadedInserts.formUnion(unknown)
                fail(
                    ContextFailure(
                        operation: "load \(unknown.count) merged insert(s) for the results (tried again with the next change, and on their own with backoff)",
                        object: nil, property: nil, error: error))
                scheduleRetry()
            }
        }
        // The matching objects with their sort values, read once here: an object whose predicate
        // or sort values cannot be read is undecided.
        let sorts = fetchRequest.sortDescriptors
        var matching: [T] = []
        var keys: [PredicateEvaluation.SortKey] = []
        var undecided: [(T, AmbarError)] = []
        for object in candidates {
            do {
                if try fetchRequest.predicate.map({ p throws(AmbarError) in try PredicateEvaluation.evaluate(p, on: object) }) ?? true {
                    keys.append(try PredicateEvaluation.SortKey(object, sorts))
                    matching.append(object)
                }
            } catch {
                undecided.append((object, error))
            }
        }
        unloadedInserts.subtract(candidates.map(\.objectID))
        if let (first, error) = undecided.first {
            // Not knowing is not "no match": each object keeps its place (shown or not: it is left
            // untouched) and the observer is told. When what failed was a read, the objects are
            // evaluated again with the next change and on their own with backoff.
            changed.subtract(undecided.map(\.0.objectID))
            let retried = undecided.filter { $0.1.isTransient }.map(\.0.objectID)
            unloadedInserts.formUnion(retried)
            fail(
                ContextFailure(
                    operation:
                        "evaluate the predicate or read the sort values of \(undecided.count) changed object(s) (each keeps its place\(retried.isEmpty ? "" : "; evaluated again once it can be read"))",
                    object: first.objectID, property: nil, error: error))
            if !retried.isEmpty { scheduleRetry() }
        }
        if sectionNameKeyPath == nil {
            return applyUnsectioned(changed: changed, gone: gone, matching: matching, keys: keys)
        }
        if sectionsFollowOwnAttribute {
            return applySectioned(changed: changed, gone: gone, matching: matching, keys: keys)
        }

        // Positions are only needed to describe the changes to an observer.
        let old = sections
        let oldPositions = onChange == nil ? [:] : positions()
        let touched = changed.union(gone)
        var next = fetchedObjects.filter { !touched.contains($0.objectID) }
        var probe = RowProbe(sorts: sorts)
        for (object, key) in zip(matching, keys) {
            var low = 0
            var high = next.count
            while low < high {
                let mid = (low + high) / 2
                if probe.precedes(next[mid], key) { low = mid + 1 } else { high = mid }
            }
            next.insert(object, at: low)
        }
        fetchedObjects = next
        rebuildSections()
        report(old: old, oldPositions: oldPositions, changed: changed)
        refetchIfMisplaced(probe, changed: changed)
    }

    /// After placing rows by binary search: when a row already shown could not be read to
    /// compare with (its fault could not be loaded), the rows may be out of order, so the
    /// failure is reported and the results are fetched again (which keeps the rows and tries
    /// again with the next change, if the store still cannot be read).
    private func refetchIfMisplaced(_ probe: RowProbe, changed: Set<ManagedObjectID>) {
        guard let (row, error) = probe.unreadable else { return }
        fail(
            ContextFailure(
                operation: "read the sort values of a row shown to place changed rows among (the results are fetched again)", object: row,
                property: nil, error: error))
        refetchWindow(changed: changed)
    }

    /// ``apply(changed:gone:)`` for a request with a `fetchLimit` or `fetchOffset`: the results
    /// are a window of the sorted matches, and a change can push rows out of it or bring in rows
    /// this context never loaded, so the window is fetched again (it is at most `fetchLimit`
    /// rows) and the difference reported, as after any change. A failed fetch keeps the rows
    /// shown, reports the failure and is tried again with the next change.
    private func refetchWindow(changed: Set<ManagedObjectID>) {
        let old = sections
        let oldPositions = onChange == nil ? [:] : positions()
        do {
            fetchedObjects = try context.fetch(fetchRequest)
            unloadedInserts = []
            retryDelay = 0
        } catch {
            unloadedInserts.formUnion(changed)
            fail(
                ContextFailure(operation: "fetch the results again after a change (tried again with the next change)", object: nil, property: nil, error: error)
            )
            scheduleRetry()
            return
        }
        rebuildSections()
        report(old: old, oldPositions: oldPositions, changed: changed)
    }

    /// Whether the sections can be edited in place: the section key is an attribute of the
    /// results' own entity and the first sort key, compared exactly. A row's section then changes
    /// only when the row itself does, and each section is one run of the sorted results. Sections
    /// named by a key path through a relationship (whose destination can change without the row)
    /// or not sorted first are rebuilt from the rows at each change instead.
    private var sectionsFollowOwnAttribute: Bool {
        guard let key = sectionNameKeyPath, !key.contains("."), let first = fetchRequest.sortDescriptors.first,
            first.key == key, first.options.isEmpty
        else { return false }
        // try?: a key that is not the entity's own attribute: sections do not follow it
        return (try? context.persistentStoreCoordinator.model.resolved.layout(fetchRequest.entityName).attributeSlot(key)) != nil
    }

    /// ``apply(changed:gone:)`` for sections that follow the rows' own attribute (see
    /// ``sectionsFollowOwnAttribute``), in time proportional to the change: the touched rows are
    /// found in one pass over the results (a field read per row), removed from their sections in
    /// place, and the matching objects placed by binary search in the section their name picks,
    /// or in a new section placed by binary search among the others. Changes are reported as the
    /// rebuilding path reports them, from the positions found on the way.
    private func applySectioned(changed: Set<ManagedObjectID>, gone: Set<ManagedObjectID>, matching: [T], keys: [PredicateEvaluation.SortKey]) {
        let pass = context.nextResultsPass()
        for id in changed.union(gone) { context.registeredObject(for: id)?.markTouched(inResultsPass: pass) }
        let sorts = fetchRequest.sortDescriptors
        let oldNames = sections.map(\.name)

        // Old positions of the touched rows: their flat indices, turned into section and row.
        var rows = fetchedObjects
        fetchedObjects = []
        let removedFlat = rows.indices(touchedIn: pass)
        let removedIDs = removedFlat.map { rows[$0].objectID }
        var oldStarts: [Int] = []
        oldStarts.reserveCapacity(sections.count)
        var offset = 0
        for section in sections {
            oldStarts.append(offset)
            offset += section.objects.count
        }
        func oldPath(_ flat: Int) -> ResultsIndexPath {
            var low = 0
            var high = oldStarts.count
            while low + 1 < high {
                let mid = (low + high) / 2
                if oldStarts[mid] <= flat { low = mid } else { high = mid }
            }
            return ResultsIndexPath(row: flat - oldStarts[low], section: low)
        }
        let oldPaths = removedFlat.map(oldPath)
        rows.remove(atAscending: removedFlat)

        // Sections without the touched rows; the ones left empty go (a name that comes back is
        // a section again below).
        var names = oldNames
        var members = sections.map(\.objects)
        sections = []
        var removedBySection: [Int: [Int]] = [:]
        for path in oldPaths { removedBySection[path.section, default: []].append(path.row) }
        for (section, removed) in removedBySection { members[section].remove(atAscending: removed) }
        for section in stride(from: members.count - 1, through: 0, by: -1) where members[section].isEmpty {
            members.remove(at: section)
            names.remove(at: section)
        }

        // The matching objects, in order, grouped by section; a name without a section gets one,
        // placed among the others by its first object.
        let order = keys.indices.sorted { PredicateEvaluation.precedes(keys[$0], keys[$1], sorts) }
        var probe = RowProbe(sorts: sorts)
        defer { refetchIfMisplaced(probe, changed: changed) }
        var placed: [String: [Int]] = [:]  // section name -> indices into `matching`, in order
        var newSectionOrder: [String] = []
        for k in order {
            let name = sectionName(matching[k])
            if placed[name] == nil && !names.contains(name) { newSectionOrder.append(name) }
            placed[name, default: []].append(k)
        }
        // Placed among the sections that have rows (so each has a first row to compare with),
        // then inserted from the back: new sections at the same place keep their order.
        var newSectionPositions: [Int] = []
        for name in newSectionOrder {
            guard let first = placed[name]?.first.map({ keys[$0] }) else { continue }
            var low = 0
            var high = members.count
            while low < high {
                let mid = (low + high) / 2
                if probe.precedes(members[mid][0], first) { low = mid + 1 } else { high = mid }
            }
            newSectionPositions.append(low)
        }
        for (name, position) in zip(newSectionOrder, newSectionPositions).reversed() {
            members.insert([], at: position)
            names.insert(name, at: position)
        }
        var newPaths: [ManagedObjectID: ResultsIndexPath] = [:]
        newPaths.reserveCapacity(order.count)
        var insertedObjects: [T] = []  // with their new paths, in the same order
        var insertedPaths: [ResultsIndexPath] = []
        for (section, name) in names.enumerated() {
            guard let group = placed[name] else { continue }
            var positions: [Int] = []
            positions.reserveCapacity(group.count)
            var low = 0
            for k in group {
                var high = members[section].count
                while low < high {
                    let mid = (low + high) / 2
                    if probe.precedes(members[section][mid], keys[k]) { low = mid + 1 } else { high = mid }
                }
                positions.append(low)
            }
            for (n, k) in group.enumerated() {
                let path = ResultsIndexPath(row: positions[n] + n, section: section)
                newPaths[matching[k].objectID] = path
                insertedObjects.append(matching[k])
                insertedPaths.append(path)
            }
            members[section].insert(group.map { matching[$0] }, atAscending: positions)
        }

        // The flat results follow the sections: the n-th placed object (in section order) lands
        // n rows after its position among the remaining rows.
        var starts: [Int] = []
        starts.reserveCapacity(members.count)
        offset = 0
        for section in members {
            starts.append(offset)
            offset += section.count
        }
        let flatPositions = insertedPaths.enumerated().map { n, path in starts[path.section] + path.row - n }
        rows.insert(insertedObjects, atAscending: flatPositions)
        fetchedObjects = rows
        sections = zip(names, members).map { ResultsSection(name: $0, objects: $1) }
        guard let onChange else { return }

        var changes: [ResultsChange] = []
        for (i, name) in oldNames.enumerated() where !names.contains(name) { changes.append(.deleteSection(name, at: i)) }
        var oldByID: [ManagedObjectID: ResultsIndexPath] = [:]
        for (id, path) in zip(removedIDs, oldPaths) where oldByID[id] == nil { oldByID[id] = path }
        for (id, path) in zip(removedIDs, oldPaths).sorted(by: { $0.1 < $1.1 }) where newPaths[id] == nil {
            changes.append(.delete(id, at: path))
        }
        for (i, name) in names.enumerated() where !oldNames.contains(name) { changes.append(.insertSection(name, at: i)) }
        var moves: [ResultsChange] = []
        var updates: [ResultsChange] = []
        for (id, to) in newPaths.sorted(by: { $0.value < $1.value }) {
            guard let from = oldByID[id] else {
                changes.append(.insert(id, at: to))
                continue
            }
            guard changed.contains(id) else { continue }
            if oldNames[from.section] != names[to.section] || from != to {
                moves.append(.move(id, from: from, to: to))
            } else {
                updates.append(.update(id, at: from))
            }
        }
        changes += moves.sorted { $0.sortKey < $1.sortKey }
        changes += updates.sorted { $0.sortKey < $1.sortKey }
        if !changes.isEmpty { onChange(changes) }
    }

    /// ``apply(changed:gone:)`` for results without sections: the objects a change touches are
    /// marked, a pass over the results (a field compared and a reference moved per row, in
    /// place) drops them, and the matching ones go where a binary search on their sort keys puts
    /// them, each row moving at most once more. Sort
    /// keys are read once per placed object and per probe, so key-path work grows with the
    /// change, not with the results; changes are reported from the positions found on the way,
    /// with no map of every position.
    private func applyUnsectioned(changed: Set<ManagedObjectID>, gone: Set<ManagedObjectID>, matching: [T], keys: [PredicateEvaluation.SortKey]) {
        let pass = context.nextResultsPass()
        for id in changed.union(gone) { context.registeredObject(for: id)?.markTouched(inResultsPass: pass) }
        // A departing object may already be unregistered; it is then invalidated, and
        // `indices(touchedIn:)` finds it by that.

        // One pass drops the touched objects; the others keep their values, so they stay sorted.
        // The array is edited in place (the sections' copy is dropped first, so nothing else
        // holds its storage), and no tuple of `T` is built: in a caller that is not specialized
        // for `T`, each costs a metadata lookup.
        var rows = fetchedObjects
        fetchedObjects = []
        sections = []
        let removedRows = rows.indices(touchedIn: pass)
        let removedIDs = removedRows.map { rows[$0].objectID }
        rows.remove(atAscending: removedRows)
        // Where each matching object goes, by binary search on sort keys read once for the
        // placed objects and as probed for the others.
        let sorts = fetchRequest.sortDescriptors
        let order = keys.indices.sorted { PredicateEvaluation.precedes(keys[$0], keys[$1], sorts) }
        var probe = RowProbe(sorts: sorts)
        defer { refetchIfMisplaced(probe, changed: changed) }
        var positions: [Int] = []
        positions.reserveCapacity(order.count)
        var low = 0
        for k in order {
            var high = rows.count
            while low < high {
                let mid = (low + high) / 2
                if probe.precedes(rows[mid], keys[k]) { low = mid + 1 } else { high = mid }
            }
            positions.append(low)
        }
        // The n-th placed object lands n rows after its position among the remaining ones.
        var newRows: [ManagedObjectID: Int] = [:]
        newRows.reserveCapacity(order.count)
        for (n, k) in order.enumerated() { newRows[matching[k].objectID] = positions[n] + n }
        rows.insert(order.map { matching[$0] }, atAscending: positions)
        fetchedObjects = rows
        sections = rows.isEmpty ? [] : [ResultsSection(name: "", objects: rows)]
        guard let onChange else { return }

        let oldRows = Dictionary(zip(removedIDs, removedRows), uniquingKeysWith: { first, _ in first })
        // Without sections there are no section changes to report: rows only.
        var changes: [ResultsChange] = []
        for (id, row) in zip(removedIDs, removedRows) where newRows[id] == nil { changes.append(.delete(id, at: ResultsIndexPath(row: row, section: 0))) }
        var inserts: [ResultsChange] = []
        var moves: [ResultsChange] = []
        var updates: [ResultsChange] = []
        for (id, row) in newRows {
            let to = ResultsIndexPath(row: row, section: 0)
            guard let from = oldRows[id].map({ ResultsIndexPath(row: $0, section: 0) }) else {
                inserts.append(.insert(id, at: to))
                continue
            }
            if !changed.contains(id) { continue }
            if from != to { moves.append(.move(id, from: from, to: to)) } else { updates.append(.update(id, at: from)) }
        }
        changes += inserts.sorted { $0.sortKey < $1.sortKey }
        changes += moves.sorted { $0.sortKey < $1.sortKey }
        changes += updates.sorted { $0.sortKey < $1.sortKey }
        if !changes.isEmpty { onChange(changes) }
    }

    private func report(old: [ResultsSection<T>], oldPositions: [ManagedObjectID: ResultsIndexPath], changed: Set<ManagedObjectID>) {
        guard let onChange else { return }
        let newPositions = positions()
        let oldNames = old.map(\.name)
        let newNames = sections.map(\.name)
        var changes: [ResultsChange] = []
        let sectioned = sectionNameKeyPath != nil  // without sections, rows only
        for (i, name) in oldNames.enumerated() where sectioned && !newNames.contains(name) { changes.append(.deleteSection(name, at: i)) }
        for (id, path) in oldPositions.sorted(by: { $0.value < $1.value }) where newPositions[id] == nil {
            changes.append(.delete(id, at: path))
        }
        for (i, name) in newNames.enumerated() where sectioned && !oldNames.contains(name) { changes.append(.insertSection(name, at: i)) }
        for (id, path) in newPositions.sorted(by: { $0.value < $1.value }) where oldPositions[id] == nil {
            changes.append(.insert(id, at: path))
        }
        // A changed object that stayed: a move when its index path (or section) changed, as Core
        // Data reports it; otherwise an update.
        var moves: [ResultsChange] = []
        var updates: [ResultsChange] = []
        for id in changed {
            guard let from = oldPositions[id], let to = newPositions[id] else { continue }
            let sectionChanged = old[from.section].name != sections[to.section].name
            if sectionChanged || from != to {
                moves.append(.move(id, from: from, to: to))
            } else {
                updates.append(.update(id, at: from))
            }
        }
        changes += moves.sorted { ($0.sortKey) < ($1.sortKey) }
        changes += updates.sorted { ($0.sortKey) < ($1.sortKey) }
        if !changes.isEmpty { onChange(changes) }
    }
}
