import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `SUBQUERY(collection, $x, predicate).@count`, on the orders of `KeyComparisonTests`: the
/// store's correlated subqueries and in-memory evaluation select the same objects, with key
/// paths inside, references to the outer object, nesting, `AND`/`OR`/`NOT` around it, the
/// `Key` builder, and substitution variables.
///
/// The orders: ann (quantity 2, budget 10, rush; lines 4×1 and 12×2; owner budget 5), bob
/// (quantity 1, budget 2.5; line 2.5×1; owner budget 3), cy (quantity 0, budget 0; no lines),
/// dee (no quantity, budget 100, rush; lines 50×1, 60×1 and 1×3; owner budget 200).
extension KeyComparisonTests {
    func testSubqueriesSelectTheSameOrdersInSQLAndInMemory() throws {
        let (sql, memory) = try contexts()
        let cases: [(String, [String])] = [
            ("SUBQUERY(items, $i, $i.price > 3).@count > 0", ["ann", "dee"]),
            ("SUBQUERY(items, $i, $i.price > 10).@count == 2", ["dee"]),
            ("SUBQUERY(items, $i, $i.price > 10).@count == 1", ["ann"]),
            ("SUBQUERY(items, $i, $i.price > 10).@count == 0", ["bob", "cy"]),
            ("subquery(items, $line, $line.price > 3).@COUNT != 0", ["ann", "dee"]),
            ("0 < SUBQUERY(items, $i, $i.price >= 50).@count", ["dee"]),
            ("SUBQUERY(items, $i, $i.price > 0).@count BETWEEN {1, 2}", ["ann", "bob"]),
            ("SUBQUERY(items, $i, $i.price > 0).@count IN {0, 3}", ["cy", "dee"]),
            // The outer object's attributes, compared with the line's or with a value.
            ("SUBQUERY(items, $i, $i.price > budget).@count > 0", ["ann"]),
            ("SUBQUERY(items, $i, budget > $i.price).@count >= 2", ["dee"]),
            ("SUBQUERY(items, $i, $i.price < budget AND $i.count >= 1).@count >= 2", ["dee"]),
            ("SUBQUERY(items, $i, $i.price > 1 AND rush == YES).@count > 0", ["ann", "dee"]),
            ("SUBQUERY(items, $i, $i.count == quantity).@count == 1", ["ann", "bob"]),
            ("SUBQUERY(items, $i, name == nickname).@count == 2", ["ann"]),
            // Key paths through to-one relationships inside; a collection reached through one.
            ("SUBQUERY(items, $i, $i.order.owner.budget > $i.price).@count > 0", ["ann", "bob", "dee"]),
            ("SUBQUERY(owner.orders, $o, $o.budget > 5).@count == 1", ["ann", "dee"]),
            // Around it: AND, OR, NOT.
            ("NOT (SUBQUERY(items, $i, $i.price > 10).@count > 0) OR name == 'dee'", ["bob", "cy", "dee"]),
            ("SUBQUERY(items, $i, $i.price > 3).@count > 0 AND SUBQUERY(items, $i, $i.price < 3).@count > 0", ["dee"]),
            // Nested: the inner one ranges over the outer one's variable, and reads all three.
            ("SUBQUERY(items, $i, SUBQUERY($i.order.items, $j, $j.price > $i.price).@count == 0).@count == 1", ["ann", "bob", "dee"]),
            ("SUBQUERY(items, $i, SUBQUERY($i.order.items, $j, $j.price > budget).@count > 0).@count == 2", ["ann"]),
            ("SUBQUERY(items, $i, SUBQUERY($i.order.items, $j, $j.price < $i.price).@count >= 1).@count == 2", ["dee"]),
            // ANY over a to-many key path of the variable.
            ("SUBQUERY(owner.orders, $o, ANY $o.items.price > 55).@count == 1", ["dee"]),
        ]
        for (format, expected) in cases {
            let predicate = try ObjectPredicate(format: format)
            XCTAssertEqual(try names(sql, predicate), expected, "SQL: \(format)")
            XCTAssertEqual(try names(memory, predicate), expected, "memory: \(format)")
        }
    }

    func testSubqueriesFromTheKeyBuilderAndTemplates() throws {
        let (sql, memory) = try contexts()
        let built = ToManyKey("items").count(
            where: Key<Double>("price") > 3 && .keyComparison(.key("price"), .less, .outer("budget")), .greaterOrEqual, 1)
        let enclosing = ToManyKey("items").count(where: Key<Double>("price") > 1 && .enclosing(Key<Bool>("rush") == true), .greater, 0)
        let template = try PredicateTemplate(format: "SUBQUERY(items, $i, $i.price > $MIN).@count > 0 AND name != $NAME")
        XCTAssertEqual(template.variables, ["MIN", "NAME"], "the SUBQUERY's own variable is bound, not substituted")
        let substituted = try template.predicate(substituting: ["MIN": 50, "NAME": "ann"])
        for context in [sql, memory] {
            XCTAssertEqual(try names(context, built), ["ann", "dee"])
            XCTAssertEqual(try names(context, enclosing), ["ann", "dee"])
            XCTAssertEqual(try names(context, substituted), ["dee"])
        }
        XCTAssertEqual(try ObjectPredicate(format: "SUBQUERY(items, $i, $i.price > 3.0 AND $i.price < budget).@count >= 1"), built)
    }

    func testSubqueriesThatCannotBeReadAreRefusedWithTheReason() throws {
        let refused: [(String, String)] = [
            ("SUBQUERY(items, $i, $i.price > 3) > 0", "@count"),
            ("SUBQUERY(items, $i, $i.price > 3).@sum > 0", "@count"),
            ("SUBQUERY(items, $i, $j.price > 3).@count > 0", "$j is not a SUBQUERY's variable"),
            ("SUBQUERY(items, i, i.price > 3).@count > 0", "SUBQUERY's variable"),
            ("SUBQUERY(items, $i, $i.price > 3).@count > quantity", "compares with a number"),
            ("SUBQUERY(items, $i, $i.price > 3).@count == 1.5", "whole number"),
            ("SUBQUERY(3, $i, $i.price > 3).@count > 0", "to-many key path"),
            ("SUBQUERY(items, $i, SUBQUERY(items, $j, $j.price < $i.price).@count > 0).@count > 0", "cannot read $i"),
            ("SUBQUERY(items, $i, $i.price > 3.@count > 0", "to close SUBQUERY"),
        ]
        for (format, reason) in refused {
            XCTAssertThrowsError(try ObjectPredicate(format: format), format) { error in
                guard case .invalidPredicateFormat(_, _, let why) = error as? AmbarError else { return XCTFail("\(format): \(error)") }
                XCTAssertTrue(why.contains(reason), "\(format): \(why)")
            }
        }
        // Parsed, but not a to-many relationship of Order: refused by the fetch, on both sides.
        let (sql, memory) = try contexts()
        let notToMany = try ObjectPredicate(format: "SUBQUERY(name, $i, $i.price > 3).@count > 0")
        for context in [sql, memory] {
            XCTAssertThrowsError(try names(context, notToMany)) { error in
                XCTAssertTrue("\(error)".contains("name"), "\(error)")
            }
        }
    }
}
