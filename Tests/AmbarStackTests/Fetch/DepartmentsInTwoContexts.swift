import AmbarStack
import AmbarTestSupport
import Foundation

/// Random departments with employees, held twice: saved in one store (so fetches run as SQL) and
/// only inserted in another context (so fetches evaluate in memory), for comparing the two.
struct DepartmentsInTwoContexts {
    /// Each department's name and its employees' (name number, salary).
    let plan: [(name: String, employees: [(Int, Double)])]
    /// Fetches here run as SQL.
    let sql: ManagedObjectContext
    /// Fetches here evaluate pending inserts in memory.
    let memory: ManagedObjectContext

    /// `count` departments of up to four employees, drawn from `seed`, plus one employee with no
    /// department; saved in `saved` (the run's backend: PostgreSQL in its pass), the in-memory
    /// side's empty store in `directory`.
    init(count: Int, seed: UInt64, directory: TemporaryDirectory, saved savedStore: StoreDescription) throws {
        let model = try TestModel.make()
        var rng = SeededRandom(seed: seed)
        let saved = try PersistentStoreCoordinator(model: model, store: savedStore)
        let empty = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("memory.sqlite")))
        sql = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: saved)
        memory = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: empty)
        plan = (0..<count).map { d in
            (
                name: "D\(d)",
                employees: (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    (Int.random(in: 0...5, using: &rng), Double(Int.random(in: 0...9, using: &rng)) * 10)
                }
            )
        }
        for context in [sql, memory] {
            try context.performAndWait { [plan] in
                for d in plan {
                    let dept = try context.insert(Department.self)
                    dept.name = d.name
                    for (i, (nameIndex, salary)) in d.employees.enumerated() {
                        let e = try context.insert(Employee.self)
                        e.name = "E\(nameIndex)"
                        e.salary = salary
                        e.age = Int16(i)
                        e.department = dept
                    }
                }
                let loner = try context.insert(Employee.self)
                loner.name = "Loner"
            }
        }
        try sql.performAndWait { try sql.save() }
    }
}
