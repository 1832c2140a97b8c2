import AmbarStack
import Foundation
import SharedStoreIPC
import XCTest

final class WireFormatTests: XCTestCase {
    let store = UUID()

    func roundTrip(_ frame: Frame, file: StaticString = #filePath, line: UInt = #line) throws {
        var decoder = FrameDecoder()
        decoder.append(try WireFormat.encode(frame))
        XCTAssertEqual(try decoder.next(), frame, file: file, line: line)
        XCTAssertNil(try decoder.next(), file: file, line: line)
        XCTAssertEqual(decoder.pendingByteCount, 0, file: file, line: line)
    }

    func testEveryFrameRoundTrips() throws {
        try roundTrip(.hello(.init(storeUUID: store, processID: 42, instanceID: ProcessInstance.id, processName: "importer-ü", cursor: 1234)))
        try roundTrip(.welcome(.init(hubProcessID: 7, peers: 3)))
        try roundTrip(.error(code: .wrongStore, message: "store mismatch"))
        try roundTrip(
            .didSave(
                .init(
                    storeUUID: store, token: 99, processID: 5, instanceID: ProcessInstance.id, author: "importer",
                    changes: [
                        "Employee": .init(inserted: [1, 2, 3], updated: [10, 1_000_000], deleted: [Int64.max]),
                        "Department": .init(updated: [7]),
                    ])))
        try roundTrip(.didSave(.init(storeUUID: store, token: 1, processID: -1, instanceID: ProcessInstance.id, author: nil, changes: [:])))
        try roundTrip(.tokenOnly(storeUUID: store, token: 5, processID: 9, instanceID: 77))
        try roundTrip(.foreignWrite(storeUUID: store))
        try roundTrip(.ping(UInt64.max))
        try roundTrip(.pong(0))
        try roundTrip(.peersRequest)
        try roundTrip(.peers([]))
        try roundTrip(
            .peers([
                .init(processID: 12, instanceID: ProcessInstance.id, processName: "viewer-ü", connectCursor: 3, lastToken: 40),
                .init(processID: 13, instanceID: ProcessInstance.id, processName: "", connectCursor: 0, lastToken: 0),
            ]))
    }

    func testDidSaveCarriesANotificationsIDs() throws {
        let ids = try (1...5).map { try ManagedObjectID(uriString: "ambar://\(store.uuidString)/Item/p\($0)") }
        let note = DidSaveNotification(inserted: [ids[0], ids[1]], updated: [ids[2]], deleted: [ids[3], ids[4]], author: "a", token: 12)
        let frame = Frame.DidSave(notification: note, storeUUID: store, token: 12, processID: 1)
        var decoder = FrameDecoder()
        decoder.append(try WireFormat.encode(.didSave(frame)))
        guard case .didSave(let decoded) = try decoder.next() else { return XCTFail("not a did-save") }
        let back = decoded.notification
        XCTAssertEqual(back.inserted, note.inserted)
        XCTAssertEqual(back.updated, note.updated)
        XCTAssertEqual(back.deleted, note.deleted)
        XCTAssertEqual(back.token, 12)
        XCTAssertEqual(back.author, "a")
    }

    func testObjectIDsAreCompact() throws {
        let frame = Frame.DidSave(
            storeUUID: store, token: 1, processID: 1, instanceID: ProcessInstance.id, author: nil, changes: ["Item": .init(updated: Array(1...10_000))])
        let bytes = try WireFormat.encode(.didSave(frame))
        XCTAssertLessThan(bytes.count, 10_100, "consecutive keys cost about one byte each")
    }

    func testStreamsSplitAnywhere() throws {
        let frames: [Frame] = [
            .ping(1),
            .didSave(.init(storeUUID: store, token: 2, processID: 3, instanceID: ProcessInstance.id, author: "x", changes: ["A": .init(inserted: [5])])),
            .pong(1),
        ]
        let bytes = try frames.flatMap { try WireFormat.encode($0) }
        var decoder = FrameDecoder()
        var received: [Frame] = []
        for byte in bytes {
            decoder.append([byte])
            while let frame = try decoder.next() { received.append(frame) }
        }
        XCTAssertEqual(received, frames)
        var whole = FrameDecoder()
        whole.append(bytes)
        XCTAssertEqual(try [whole.next(), whole.next(), whole.next(), whole.next()], frames.map { $0 } + [nil])
    }

    func assertRejects(_ bytes: [UInt8], maximum: Int = WireFormat.defaultMaximumFrameSize, _ check: (WireError) -> Bool, line: UInt = #line) {
        var decoder = FrameDecoder(maximumFrameSize: maximum)
        decoder.append(bytes)
        do {
            _ = try decoder.next()
            XCTFail("expected a wire error", line: line)
        } catch {
            XCTAssertTrue(check(error), "\(error)", line: line)
        }
    }

    func testBadFramesAreTypedErrors() throws {
        // An oversized length is refused before its body arrives.
        assertRejects([0x00, 0x20, 0x00, 0x00]) {
            if case .frameTooLarge = $0 { return true }
            return false
        }
        assertRejects(try WireFormat.encode(.ping(1)), maximum: 8) {
            if case .frameTooLarge = $0 { return true }
            return false
        }
        assertRejects([0, 0, 0, 2, 9, 0x20]) { $0 == .unsupportedVersion(9) }
        let version = WireFormat.protocolVersion
        assertRejects([0, 0, 0, 2, 1, 0x20]) { $0 == .unsupportedVersion(1) }  // the version before instance IDs
        assertRejects([0, 0, 0, 2, version, 0x7E]) { $0 == .unknownFrameType(0x7E) }
        assertRejects([0, 0, 0, 1, version]) {
            if case .malformed = $0 { return true }
            return false
        }
        assertRejects([0, 0, 0, 5, version, 0x20, 0, 0, 0]) {
            if case .malformed = $0 { return true }
            return false
        }  // truncated ping
        var longer = try WireFormat.encode(.ping(1))
        longer[3] += 1
        longer.append(0)
        assertRejects(longer) {
            if case .malformed(let m) = $0 { return m.contains("unexpected bytes") }
            return false
        }
        // Keys must be sorted and distinct: a zero gap is refused.
        var save = try WireFormat.encode(
            .didSave(.init(storeUUID: store, token: 1, processID: 1, instanceID: ProcessInstance.id, author: nil, changes: ["A": .init(inserted: [1, 2])])))
        let gapIndex = save.count - 4  // [count=2][1][gap=1][0][0]
        save[gapIndex] = 0
        assertRejects(save) {
            if case .malformed = $0 { return true }
            return false
        }
        XCTAssertThrowsError(
            try WireFormat.encode(
                .didSave(.init(storeUUID: store, token: 1, processID: 1, instanceID: ProcessInstance.id, author: nil, changes: ["A": .init(inserted: [2, 1])])))
        )
        XCTAssertThrowsError(
            try WireFormat.encode(
                .didSave(
                    .init(
                        storeUUID: store, token: 1, processID: 1, instanceID: ProcessInstance.id, author: nil,
                        changes: ["A": .init(inserted: Array(stride(from: Int64(1), through: 40_000_000_000, by: 100_000)))]))), "too large for one frame"
        ) {
            guard case .frameTooLarge = $0 as? WireError else { return XCTFail("\($0)") }
        }
        XCTAssertTrue(WireError.unsupportedVersion(9).description.contains("upgrade"))
    }

    func testRandomBytesNeverCrashTheDecoder() throws {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var frames = 0
        var errors = 0
        for _ in 0..<20_000 {
            var decoder = FrameDecoder(maximumFrameSize: 4096)
            let length = Int(next() % 64)
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
            if next() % 2 == 0, bytes.count >= 6 {  // plausible headers reach the payload parsers
                bytes[0] = 0
                bytes[1] = 0
                bytes[2] = 0
                bytes[3] = UInt8(bytes.count - 4)
                bytes[4] = 1
                bytes[5] = [0x01, 0x02, 0x03, 0x10, 0x11, 0x20, 0x21][Int(next() % 7)]
            }
            decoder.append(bytes)
            do {
                while try decoder.next() != nil { frames += 1 }
            } catch {
                errors += 1
            }
        }
        XCTAssertGreaterThan(errors, 1_000)
    }
}
