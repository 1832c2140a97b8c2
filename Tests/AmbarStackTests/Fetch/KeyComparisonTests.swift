import AmbarModels
import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

@Model final class Shipment: ManagedObject {
    var serial: Int = 0
    var quantity: Int = 0
    var packed: Int = 0
    var due: Date = Date(timeIntervalSinceReferenceDate: 0)
    var sent: Date = Date(timeIntervalSinceReferenceDate: 0)
    var label: String = ""
    var carrier: String = ""
}

/// Comparing two key paths (`dog.name == name`, `items.@count == quantity`,
/// `ANY items.price > budget`): the store's SQL and in-memory evaluation select the same objects,
/// from format strings, the `Key` builder and `ObjectPredicate` alike.
final class KeyComparisonTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func shopModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Order",
                properties: [
                    .attribute("name", .string), .attribute("nickname", .string, optional: true),
                    .attribute("quantity", .integer32, optional: true), .attribute("budget", .double, optional: true),
                    .attribute("rush", .boolean, defaultValue: false), .attribute("due", .date, optional: true),
                    .attribute("shipped", .date, optional: true), .attribute("limit", .decimal, optional: true),
                    .attribute("spent", .decimal, optional: true),
                    .toMany("items", "Line", inverse: "order"), .toOne("owner", "Customer", inverse: "orders"),
                ]),
            EntityDescription(
                "Line",
                properties: [.attribute("price", .double), .attribute("count", .integer16, defaultValue: 1), .toOne("order", "Order", inverse: "items")]),
            EntityDescription(
                "Customer",
                properties: [.attribute("name", .string), .attribute("budget", .double, optional: true), .toMany("orders", "Order", inverse: "owner")]),
        ])
    }

    /// Two contexts with the same objects: one saved (fetches run as SQL), one over an empty
    /// store with the objects pending (fetches evaluate in memory).
    func contexts() throws -> (sql: ManagedObjectContext, memory: ManagedObjectContext) {
        let model = try shopModel()
        let sql = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: try store("keys.sqlite")))
        let memory = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("keys-memory.sqlite"))))
        let day = 86_400.0
        let orders: [[String: AttributeValue]] = [
            [
                "name": .string("ann"), "nickname": .string("ann"), "quantity": .integer(2), "budget": .double(10), "rush": .bool(true),
                "due": .date(Date(timeIntervalSinceReferenceDate: 5 * day)), "shipped": .date(Date(timeIntervalSinceReferenceDate: 4 * day)),
                "limit": .decimal(Decimal(string: "9.99")!), "spent": .decimal(Decimal(string: "10.5")!),
            ],
            [
                "name": .string("bob"), "nickname": .string("Bob"), "quantity": .integer(1), "budget": .double(2.5),
                "due": .date(Date(timeIntervalSinceReferenceDate: 5 * day)), "shipped": .date(Date(timeIntervalSinceReferenceDate: 6 * day)),
                "limit": .decimal(3), "spent": .decimal(3),
            ],
            ["name": .string("cy"), "quantity": .integer(0), "budget": .double(0), "limit": .decimal(1)],
            [
                "name": .string("dee"), "nickname": .string("dee"), "budget": .double(100), "rush": .bool(true),
                "due": .date(Date(timeIntervalSinceReferenceDate: 1 * day)),
            ],
        ]
        let lines: [[(Double, Int64)]] = [[(4, 1), (12, 2)], [(2.5, 1)], [], [(50, 1), (60, 1), (1, 3)]]
        let owners: [(String, Double?)] = [("ann", 5), ("zed", 3), ("cy", nil), ("dee", 200)]
        for context in [sql, memory] {
            try context.performAndWait {
                for ((values, items), owner) in zip(zip(orders, lines), owners) {
                    let order = try context.insertObject(entityName: "Order")
                    for (key, value) in values { try order.setValue(value, forKey: key) }
                    for (price, count) in items {
                        let line = try context.insertObject(entityName: "Line")
                        try line.setValue(.double(price), forKey: "price")
                        try line.setValue(.integer(count), forKey: "count")
                        try line.setObject(order, forKey: "order")
                    }
                    let customer = try context.insertObject(entityName: "Customer")
                    try customer.setValue(.string(owner.0), forKey: "name")
                    try customer.setValue(owner.1.map { .double($0) } ?? .null, forKey: "budget")
                    try order.setObject(customer, forKey: "owner")
                }
            }
        }
        try sql.performAndWait { try sql.save() }
        return (sql, memory)
    }

    func names(_ context: ManagedObjectContext, _ predicate: ObjectPredicate) throws -> [String] {
        try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Order", predicate: predicate)).map { object -> String in
                guard case .string(let name) = try object.value(forKey: "name") else { return "?" }
                return name
            }.sorted()
        }
    }

    func testFormatStringsComparingKeyPathsSelectTheSameOrdersInSQLAndInMemory() throws {
        let (sql, memory) = try contexts()
        let cases: [(String, [String])] = [
            ("name == nickname", ["ann", "dee"]),
            ("name != nickname", ["bob", "cy"]),
            ("nickname == name", ["ann", "dee"]),
            ("owner.name == name", ["ann", "cy", "dee"]),
            ("owner.name != name", ["bob"]),
            ("quantity < budget", ["ann", "bob"]),
            ("quantity >= budget", ["cy"]),
            ("items.@count == quantity", ["ann", "bob", "cy"]),
            ("items.@count > quantity", []),
            ("quantity <= items.@count", ["ann", "bob", "cy"]),
            ("items.@sum.price > budget", ["ann", "dee"]),
            ("items.@max.price >= owner.budget", ["ann"]),
            ("items.@avg.price < budget", ["ann", "dee"]),
            ("ANY items.price > budget", ["ann"]),
            ("ALL items.price <= budget", ["bob", "cy", "dee"]),
            ("NONE items.price > budget", ["bob", "cy", "dee"]),
            ("ANY items.count >= quantity", ["ann", "bob"]),
            ("owner.budget > budget", ["bob", "dee"]),
            ("shipped > due", ["bob"]),
            ("shipped <= due", ["ann"]),
            ("due == shipped", ["cy"]),
            ("spent > limit", ["ann"]),
            ("spent == limit", ["bob", "dee"]),
            ("spent != limit", ["ann", "cy"]),
            ("rush < quantity", ["ann", "bob"]),
            ("NOT (name == nickname) AND quantity < budget", ["bob"]),
            ("name == nickname OR items.@count == 0", ["ann", "cy", "dee"]),
        ]
        for (format, expected) in cases {
            let predicate = try ObjectPredicate(format: format)
            XCTAssertEqual(try names(sql, predicate), expected, "SQL: \(format)")
            XCTAssertEqual(try names(memory, predicate), expected, "memory: \(format)")
        }
    }

    func testTheKeyBuilderAndObjectPredicateSayTheSame() throws {
        let (sql, memory) = try contexts()
        let predicates: [(ObjectPredicate, [String])] = [
            (Key<Int32>("quantity") < Key<Double>("budget"), ["ann", "bob"]),
            (Key<String>("name").equals(Key<String>("owner.name")), ["ann", "cy", "dee"]),
            (Key<String>("name").equals(Key<String>("nickname"), options: .caseInsensitive), ["ann", "bob", "dee"]),
            (.keyComparison(.count("items"), .equal, .key("quantity")), ["ann", "bob", "cy"]),
            (ToManyKey("items").any(.keyComparison(.key("price"), .greater, .outer("budget"))), ["ann"]),
        ]
        for (predicate, expected) in predicates {
            if backend == .postgres, case .keyComparison(_, _, _, let options) = predicate, !options.isEmpty {
                XCTAssertThrowsError(try names(sql, predicate)) { error in
                    XCTAssertTrue("\(error)".contains("not supported on PostgreSQL"), "\(error)")
                }
            } else {
                XCTAssertEqual(try names(sql, predicate), expected, "SQL: \(predicate)")
            }
            XCTAssertEqual(try names(memory, predicate), expected, "memory: \(predicate)")
        }
    }

    func testHashPredicatesComparingTwoPropertiesAgreeWithFoundation() throws {
        let model = try ManagedObjectModel(declaring: [Shipment.self])
        let context = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: try store("shipments.sqlite")))
        var rng = SeededRandom(seed: 26)
        try context.performAndWait {
            for serial in 0..<60 {
                let shipment = Shipment()
                shipment.serial = serial
                shipment.quantity = Int.random(in: 0...4, using: &rng)
                shipment.packed = Int.random(in: 0...4, using: &rng)
                shipment.due = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...3, using: &rng)) * 86_400)
                shipment.sent = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...3, using: &rng)) * 86_400)
                shipment.label = ["a", "b", "B"].randomElement(using: &rng)!
                shipment.carrier = ["a", "b", "c"].randomElement(using: &rng)!
                try context.insert(shipment)
            }
            try context.save()
        }
        let predicates: [Predicate<Shipment>] = [
            #Predicate { $0.packed < $0.quantity },
            #Predicate { $0.packed == $0.quantity },
            #Predicate { $0.sent > $0.due },
            #Predicate { $0.label != $0.carrier },
            #Predicate { $0.packed >= $0.quantity && $0.sent <= $0.due },
        ]
        try context.performAndWait {
            let all = try context.fetch(FetchRequest<Shipment>())
            for predicate in predicates {
                let fromStore = try context.fetch(try FetchRequest<Shipment>(predicate: predicate)).map(\.serial).sorted()
                let fromFoundation = try all.filter { try predicate.evaluate($0) }.map(\.serial).sorted()
                XCTAssertEqual(fromStore, fromFoundation, "\(predicate.expression)")
                XCTAssertFalse(fromFoundation.isEmpty || fromFoundation.count == all.count, "a selective predicate: \(predicate.expression)")
            }
        }
    }

    func testComparisonsThatCannotHoldAreRefusedWithAReason() throws {
        let (sql, memory) = try contexts()
        let refused: [(String, String)] = [
            ("name == quantity", "compares a string with an integer32"),
            ("due < budget", "compares a date with a double"),
            ("items.price > owner.orders.budget", "both sides"),
            ("name CONTAINS nickname", "between two key paths is not supported"),
        ]
        for (format, reason) in refused {
            do {
                let predicate = try ObjectPredicate(format: format)
                for context in [sql, memory] {
                    XCTAssertThrowsError(try names(context, predicate), format) { error in
                        XCTAssertTrue("\(error)".contains(reason), "\(format): \(error)")
                    }
                }
            } catch {
                XCTAssertTrue("\(error)".contains(reason), "\(format): \(error)")
            }
        }
        XCTAssertThrowsError(try names(sql, .keyComparison(.key("budget"), .less, .outer("budget")))) { error in
            XCTAssertTrue("\(error)".contains("fewer enclosing ranges"), "\(error)")
        }
    }
}
