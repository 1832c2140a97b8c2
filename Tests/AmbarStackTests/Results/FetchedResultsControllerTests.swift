import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

final class FetchedResultsControllerTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func makeController(_ context: ManagedObjectContext, sections: Bool = false) throws -> (
        FetchedResultsController<Employee>, Collector<[ResultsChange]>
    ) {
        let request = FetchRequest<Employee>(
            predicate: Key<Double>("salary") >= 10,
            sortDescriptors: sections ? [Key<String>("department.name").sorted(), Key<Double>("salary").sorted()] : [Key<Double>("salary").sorted()])
        let controller = FetchedResultsController(fetchRequest: request, context: context, sectionNameKeyPath: sections ? "department.name" : nil)
        let log = Collector<[ResultsChange]>()
        controller.onChange = { log.append($0) }
        try controller.performFetch()
        return (controller, log)
    }

    func testLocalChangesReportedInOrder() throws {
        let low = try seedEmployee("Low", salary: 10)
        let mid = try seedEmployee("Mid", salary: 20)
        let high = try seedEmployee("High", salary: 30)
        _ = try seedEmployee("Poor", salary: 1)
        let context = privateContext()
        try context.performAndWait {
            let (controller, log) = try makeController(context)
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["Low", "Mid", "High"])

            let new = try context.insert(Employee.self)
            new.name = "New"
            new.salary = 25
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.insert(new.objectID, at: ResultsIndexPath(row: 2, section: 0))])

            (context.registeredObject(for: low) as? Employee)?.salary = 40  // moves to the end
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.move(low, from: ResultsIndexPath(row: 0, section: 0), to: ResultsIndexPath(row: 3, section: 0))])

            (context.registeredObject(for: mid) as? Employee)?.name = "Middle"  // stays in place
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.update(mid, at: ResultsIndexPath(row: 0, section: 0))])

            (context.registeredObject(for: high) as? Employee)?.salary = 5  // no longer matches
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.delete(high, at: ResultsIndexPath(row: 2, section: 0))])

            try context.delete(try XCTUnwrap(context.registeredObject(for: mid)))
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.delete(mid, at: ResultsIndexPath(row: 0, section: 0))])
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["New", "Low"])
            XCTAssertEqual(controller.indexPath(for: new), ResultsIndexPath(row: 0, section: 0))
        }
    }

    func testSectionsAppearAndDisappear() throws {
        let context = privateContext()
        try context.performAndWait {
            let a = try context.insert(Department.self)
            a.name = "A"
            let b = try context.insert(Department.self)
            b.name = "B"
            let e = try context.insert(Employee.self)
            e.name = "E"
            e.salary = 10
            e.department = a
            try context.save()
            let (controller, log) = try makeController(context, sections: true)
            XCTAssertEqual(controller.sections.map(\.name), ["A"])
            e.department = b
            context.processPendingChanges()
            XCTAssertEqual(controller.sections.map(\.name), ["B"])
            XCTAssertEqual(
                log.all.last,
                [
                    .deleteSection("A", at: 0), .insertSection("B", at: 0),
                    .move(e.objectID, from: ResultsIndexPath(row: 0, section: 0), to: ResultsIndexPath(row: 0, section: 0)),
                ])
        }
    }

    func testAControllerWithoutSectionsReportsRowsOnly() throws {
        let context = privateContext()
        try context.performAndWait {
            let (controller, log) = try makeController(context)
            XCTAssertTrue(controller.fetchedObjects.isEmpty)
            let first = try context.insert(Employee.self)
            first.name = "First"
            first.salary = 20
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.insert(first.objectID, at: ResultsIndexPath(row: 0, section: 0))], "no section insert")
            try context.delete(first)
            context.processPendingChanges()
            XCTAssertEqual(log.all.last, [.delete(first.objectID, at: ResultsIndexPath(row: 0, section: 0))], "no section delete")
            XCTAssertTrue(controller.sections.isEmpty)
        }
    }

    func testMergedSavesFromAnotherContextReachTheController() throws {
        let id = try seedEmployee("Kept", salary: 10)
        let doomed = try seedEmployee("Doomed", salary: 20)
        let viewer = privateContext("viewer")
        let (controller, log) = try viewer.performAndWait { try makeController(viewer) }
        let writer = privateContext("writer")
        let saves = Collector<DidSaveNotification>()
        let observation = writer.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        let newID: ManagedObjectID = try writer.performAndWait {
            (try writer.existingObject(with: id) as? Employee)?.salary = 50
            try writer.delete(try writer.existingObject(with: doomed))
            let n = try writer.insert(Employee.self)
            n.name = "Arrived"
            n.salary = 15
            try writer.save()
            return n.objectID
        }
        viewer.mergeChanges(fromContextDidSave: try XCTUnwrap(saves.all.first))
        try viewer.performAndWait {
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["Arrived", "Kept"])
            let changes = try XCTUnwrap(log.all.last)
            XCTAssertTrue(changes.contains(.delete(doomed, at: ResultsIndexPath(row: 1, section: 0))), "\(changes)")
            XCTAssertTrue(changes.contains(.insert(newID, at: ResultsIndexPath(row: 0, section: 0))), "\(changes)")
            XCTAssertTrue(changes.contains(.move(id, from: ResultsIndexPath(row: 0, section: 0), to: ResultsIndexPath(row: 1, section: 0))), "\(changes)")
        }
    }

    func testRandomEditsKeepResultsEqualToAFreshFetch() throws {
        var rng = SeededRandom(seed: 42)
        for i in 0..<20 { _ = try seedEmployee("S\(i)", salary: Double(Int.random(in: 0...40, using: &rng))) }
        let context = privateContext()
        try context.performAndWait {
            let (controller, log) = try makeController(context)
            var shown = controller.fetchedObjects.map(\.objectID)
            var temporaries: [ManagedObjectID: ObjectIdentifier] = [:]
            for step in 0..<200 {
                let all = try context.fetch(FetchRequest<Employee>())
                let reported = log.all.count
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    let e = try context.insert(Employee.self)
                    e.name = "N\(step)"
                    e.salary = Double(Int.random(in: 0...40, using: &rng))
                case 1:
                    if let e = all.randomElement(using: &rng) { e.salary = Double(Int.random(in: 0...40, using: &rng)) }
                case 2:
                    if let e = all.randomElement(using: &rng) { try context.delete(e) }
                default:
                    if step % 10 == 0 { try context.save() }
                }
                context.processPendingChanges()
                let fresh = try context.fetch(controller.fetchRequest).map(\.objectID)
                XCTAssertEqual(controller.fetchedObjects.map(\.objectID), fresh, "step \(step)")
                if controller.fetchedObjects.map(\.objectID) != fresh { return }
                // A list view applying only the reported changes shows the same rows.
                for changes in log.all.dropFirst(reported) { shown = Self.replay(changes, on: shown) }
                // A save gives inserted objects permanent IDs without a change to report.
                let current = Dictionary(controller.fetchedObjects.map { (ObjectIdentifier($0), $0.objectID) }, uniquingKeysWith: { a, _ in a })
                shown = shown.map { id in temporaries[id].flatMap { current[$0] } ?? id }
                temporaries = Dictionary(
                    controller.fetchedObjects.filter(\.objectID.isTemporaryID).map { ($0.objectID, ObjectIdentifier($0)) }, uniquingKeysWith: { a, _ in a })
                XCTAssertEqual(shown, fresh, "step \(step): the reported changes do not turn the old rows into the new ones")
                if shown != fresh { return }
            }
            XCTAssertGreaterThan(log.all.count, 50)
        }
    }
}

extension FetchedResultsControllerTests {
    /// Sections that follow the rows' own attribute (age, sorted first) are edited in place:
    /// after each random edit the controller's rows and sections equal a fresh controller's, and
    /// the reported changes, applied to the old sections as a table view applies them, give the
    /// new ones.
    func testRandomEditsKeepSectionsEqualToAFreshController() throws {
        var rng = SeededRandom(seed: 7)
        let context = privateContext()
        try context.performAndWait {
            func randomEmployee(_ name: String) throws {
                let e = try context.insert(Employee.self)
                e.name = name
                e.age = Int16(Int.random(in: 20...25, using: &rng))
                e.salary = Double(Int.random(in: 0...40, using: &rng))
            }
            for i in 0..<30 { try randomEmployee("S\(i)") }
            try context.save()
            let request = FetchRequest<Employee>(
                predicate: Key<Double>("salary") >= 10, sortDescriptors: [Key<Int16>("age").sorted(), Key<Double>("salary").sorted()])
            let controller = FetchedResultsController(fetchRequest: request, context: context, sectionNameKeyPath: "age")
            let log = Collector<[ResultsChange]>()
            controller.onChange = { log.append($0) }
            try controller.performFetch()
            func shape(_ sections: [ResultsSection<Employee>]) -> [[ObjectIdentifier]] {
                sections.map { $0.objects.map(ObjectIdentifier.init) }
            }
            var shown = shape(controller.sections)
            var shownNames = controller.sections.map(\.name)
            var sectionChanges = 0
            for step in 0..<300 {
                let all = try context.fetch(FetchRequest<Employee>())
                let reported = log.all.count
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: try randomEmployee("N\(step)")
                case 1: all.randomElement(using: &rng)?.salary = Double(Int.random(in: 0...40, using: &rng))
                case 2: all.randomElement(using: &rng)?.age = Int16(Int.random(in: 18...27, using: &rng))
                case 3: if let e = all.randomElement(using: &rng) { try context.delete(e) }
                case 4:
                    // Several rows at once, across sections.
                    for e in all.shuffled(using: &rng).prefix(4) { e.age = Int16(Int.random(in: 18...27, using: &rng)) }
                default: if step % 10 == 0 { try context.save() }
                }
                context.processPendingChanges()
                let fresh = FetchedResultsController(fetchRequest: request, context: context, sectionNameKeyPath: "age")
                try fresh.performFetch()
                XCTAssertEqual(controller.fetchedObjects.map(ObjectIdentifier.init), fresh.fetchedObjects.map(ObjectIdentifier.init), "step \(step)")
                XCTAssertEqual(controller.sections.map(\.name), fresh.sections.map(\.name), "step \(step)")
                XCTAssertEqual(shape(controller.sections), shape(fresh.sections), "step \(step)")
                for changes in log.all.dropFirst(reported) {
                    sectionChanges += changes.filter { if case .insertSection = $0 { true } else if case .deleteSection = $0 { true } else { false } }.count
                    (shownNames, shown) = Self.replay(changes, onSections: shownNames, shown, objects: context)
                }
                XCTAssertEqual(shownNames, fresh.sections.map(\.name), "step \(step): the reported section changes")
                XCTAssertEqual(shown, shape(fresh.sections), "step \(step): the reported changes do not turn the old sections into the new ones")
                if shown != shape(fresh.sections) || shownNames != fresh.sections.map(\.name) { return }
            }
            XCTAssertGreaterThan(sectionChanges, 10, "sections appeared and disappeared")
        }
    }

    /// Applies changes to sections as a table view does: row deletes and move sources at their
    /// old paths (from the bottom), then section deletes at their old indexes, section inserts
    /// at their new ones, then row inserts and move destinations at their new paths (from the
    /// top).
    static func replay(
        _ changes: [ResultsChange], onSections names: [String], _ rows: [[ObjectIdentifier]], objects context: ManagedObjectContext
    ) -> ([String], [[ObjectIdentifier]]) {
        var names = names
        var rows = rows
        var removals: [ResultsIndexPath] = []
        var additions: [(ResultsIndexPath, ObjectIdentifier)] = []
        var sectionDeletes: [Int] = []
        var sectionInserts: [(Int, String)] = []
        func object(_ id: ManagedObjectID) -> ObjectIdentifier? { context.registeredObject(for: id).map(ObjectIdentifier.init) }
        for change in changes {
            switch change {
            case .delete(_, let at): removals.append(at)
            case .insert(let id, let at): if let o = object(id) { additions.append((at, o)) }
            case .move(let id, let from, let to):
                removals.append(from)
                if let o = object(id) { additions.append((to, o)) }
            case .deleteSection(_, let at): sectionDeletes.append(at)
            case .insertSection(let name, let at): sectionInserts.append((at, name))
            case .update: break
            }
        }
        for path in removals.sorted(by: >) where rows.indices.contains(path.section) && rows[path.section].indices.contains(path.row) {
            rows[path.section].remove(at: path.row)
        }
        for index in sectionDeletes.sorted(by: >) where rows.indices.contains(index) {
            rows.remove(at: index)
            names.remove(at: index)
        }
        for (index, name) in sectionInserts.sorted(by: { $0.0 < $1.0 }) {
            rows.insert([], at: min(index, rows.count))
            names.insert(name, at: min(index, names.count))
        }
        for (path, o) in additions.sorted(by: { $0.0 < $1.0 }) where rows.indices.contains(path.section) {
            rows[path.section].insert(o, at: min(path.row, rows[path.section].count))
        }
        return (names, rows)
    }

    /// Applies changes to a one-section list as a table view does: deletes and move sources at
    /// their old rows (from the bottom), then inserts and move destinations at their new rows
    /// (from the top).
    static func replay(_ changes: [ResultsChange], on rows: [ManagedObjectID]) -> [ManagedObjectID] {
        var removals: [Int] = []
        var additions: [(Int, ManagedObjectID)] = []
        for change in changes {
            switch change {
            case .delete(_, let at): removals.append(at.row)
            case .insert(let id, let at): additions.append((at.row, id))
            case .move(let id, let from, let to):
                removals.append(from.row)
                additions.append((to.row, id))
            case .update, .insertSection, .deleteSection: break
            }
        }
        var result = rows
        for row in removals.sorted(by: >) where result.indices.contains(row) { result.remove(at: row) }
        for (row, id) in additions.sorted(by: { $0.0 < $1.0 }) { result.insert(id, at: min(row, result.count)) }
        return result
    }

    /// A merged insert that cannot be loaded because the store's server is out of reach shows up
    /// on its own once the server answers again (and updated objects that could not be re-read
    /// are reported as such), instead of waiting for a change that may never come.
    func testMergedInsertsLoadOnceTheServerAnswersAgain() throws {
        guard backend == .postgres else { throw XCTSkip("needs a store whose server can be stopped (PostgreSQL)") }
        let server = try PostgresTestServer.shared()
        _ = try seedEmployee("Before", salary: 10)
        let viewer = privateContext("viewer")
        let controller = try viewer.performAndWait { try makeController(viewer).0 }
        let errors = Collector<String>()
        viewer.performAndWait { controller.onError = { errors.append("\($0)") } }
        let late = try seedEmployee("Late", salary: 20)

        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        viewer.performAndWait {
            _ = viewer.mergeChanges(fromContextDidSave: DidSaveNotification(inserted: [late], updated: [], deleted: [], author: nil, token: nil))
        }
        XCTAssertFalse(errors.all.isEmpty, "the controller said it could not load the insert")
        XCTAssertEqual(viewer.performAndWait { controller.fetchedObjects.map(\.name) }, ["Before"])
        try server.restart()
        restarted = true

        var names: [String] = []
        let appeared = eventually(timeout: 30, every: 0.05) {
            names = viewer.performAndWait { controller.fetchedObjects.map(\.name) }
            return names == ["Before", "Late"]
        }
        XCTAssertTrue(appeared, "the insert appeared without another change; the controller has \(names)")
    }
}
