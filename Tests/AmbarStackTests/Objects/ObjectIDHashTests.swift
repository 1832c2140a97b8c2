import AmbarStack
import Foundation
import XCTest

/// How IDs spread over a hash table's buckets (a table of 2^14 buckets, as `Dictionary` takes a
/// hash's low bits): neighbouring keys of one entity share one group of buckets, so that a
/// context registering a fetch in key order touches each cache line once, and keys at any
/// stride — powers of two included — still spread as a hash spreads them.
final class ObjectIDHashTests: XCTestCase {
    private let buckets = 1 << 14
    private let seed = 0x5EED

    private func bucket(_ key: Int64, _ entity: String = "Item") -> Int {
        ManagedObjectID(entityName: entity, storeIdentifier: "6F0B2E4C-0000-4000-8000-000000000001", primaryKey: key)
            ._rawHashValue(seed: seed) & (buckets - 1)
    }

    func testSixteenNeighbouringKeysFillTheSixteenBucketsOfOneGroup() {
        for group in stride(from: Int64(0), to: 4096, by: 16) {
            let landed = (group..<group + 16).map { bucket($0) }
            XCTAssertEqual(Set(landed.map { $0 >> 4 }).count, 1, "keys \(group)…\(group + 15) in one group")
            XCTAssertEqual(Set(landed).count, 16, "keys \(group)…\(group + 15) in sixteen buckets")
        }
    }

    func testKeysAtAnyStrideSpreadOverTheBuckets() {
        // 8,192 keys in 16,384 buckets: hashed at random about 6,450 distinct buckets are hit
        // (16,384 × (1 − e^(−1/2))); keys of one group fill it (stride 1: about 6,450 too), and
        // a hash that kept the key's low bits as they are would reach only one bucket in
        // sixteen at a stride of sixteen.
        for step in [1, 2, 3, 16, 17, 64, 1024, 4096, 1 << 16, 1 << 20, 1 << 32] as [Int64] {
            let hit = Set((1...Int64(8192)).map { bucket($0 * step) })
            XCTAssertGreaterThan(hit.count, 5_800, "stride \(step)")
        }
    }

    func testTheSameKeyOfTwoEntitiesLandsApart() {
        let apart = (1...Int64(1000)).filter { bucket($0, "Item") != bucket($0, "Order") }
        XCTAssertGreaterThan(apart.count, 990)
    }
}
