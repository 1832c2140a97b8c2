import AmbarTestSupport
import Foundation
import NIOCore
import NIOEmbedded
import XCTest

@testable import SharedStoreIPC

/// The hub's handlers in process: connections are `EmbeddedChannel`s on one `EmbeddedEventLoop`
/// (as the hub's connections share its one event loop), so each step — a frame in, the frames
/// out, a connection closed, time passing — is seen at once, with no socket and no thread. The
/// process-level tests (`HubHostingTests`, `HubLimitsTests`) run the same handlers over real
/// sockets; these find a failure in the handlers themselves in milliseconds.
final class HubHandlerTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private let storeUUID = UUID()
    private let loop = EmbeddedEventLoop()

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    /// The state of a hub for a store file owned by this process's user, configured by `edit`.
    private func makeHub(_ edit: (inout SyncHub.Configuration) -> Void = { _ in }) throws -> HubState {
        let store = directory.file()
        XCTAssertTrue(FileManager.default.createFile(atPath: store.path, contents: Data()))
        var configuration = try SyncHub.Configuration(socketPath: directory.file("hub.sock").path, storeUUID: storeUUID, storeFile: store)
        edit(&configuration)
        return HubState(configuration: configuration, eventLoop: loop)
    }

    /// A connection to `hub` from a process of user `userID` and group `groupID` (this
    /// process's by default), active.
    private func connect(to hub: HubState, userID: UInt32 = getuid(), groupID: UInt32 = getgid()) throws -> EmbeddedChannel {
        let credentials = PeerCredentials(processID: 4242, userID: userID, groupID: groupID, supplementaryGroups: [])
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([
            ByteToMessageHandler(FrameDecoderHandler(maximumFrameSize: hub.configuration.maximumFrameSize)),
            HubConnectionHandler(state: hub, credentials: { _ in credentials }),
        ])
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/hub.sock")).wait()
        return channel
    }

    private func hello(_ instance: UInt64, store: UUID? = nil, bell: Frame.BellUse? = nil) -> Frame {
        .hello(Frame.Hello(storeUUID: store ?? storeUUID, processID: 4242, instanceID: instance, processName: "peer\(instance)", cursor: 0, bell: bell))
    }

    private func didSave(_ token: Int64) -> Frame {
        .didSave(Frame.DidSave(storeUUID: storeUUID, token: token, processID: 4242, instanceID: 1, author: nil, changes: [:]))
    }

    private func send(_ frame: Frame, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(bytes: try WireFormat.encode(frame)))
    }

    /// The frames the hub wrote to `channel` (and flushed), in order.
    private func received(by channel: EmbeddedChannel) throws -> [Frame] {
        var frames: [Frame] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            let bytes = Array(buffer.readableBytesView)
            XCTAssertEqual(bytes.count, 4 + Int(try XCTUnwrap(buffer.getInteger(at: buffer.readerIndex, as: UInt32.self))), "one whole frame per write")
            frames.append(try WireFormat.decodeBody(bytes[4...]))
        }
        return frames
    }

    /// A connection admitted by its hello (which says it uses `bell`, if given), its welcome read.
    private func admitted(to hub: HubState, instance: UInt64, bell: Frame.BellUse? = nil) throws -> EmbeddedChannel {
        let channel = try connect(to: hub)
        try send(hello(instance, bell: bell), to: channel)
        guard case .welcome = try received(by: channel).first else {
            XCTFail("a hello of this store is welcomed")
            return channel
        }
        return channel
    }

    /// The error frame `channel` was sent, and that it was closed after it.
    private func assertRefused(_ channel: EmbeddedChannel, _ code: Frame.ErrorCode, file: StaticString = #filePath, line: UInt = #line) throws {
        let frames = try received(by: channel)
        guard case .error(let sent, let message)? = frames.last, frames.count == 1 else {
            return XCTFail("one error frame, not \(frames)", file: file, line: line)
        }
        XCTAssertEqual(sent, code, message, file: file, line: line)
        XCTAssertFalse(channel.isActive, "the connection is closed after the error frame", file: file, line: line)
    }

    // MARK: - Handshake

    func testAHelloIsWelcomedAndSavesGoToEveryOtherPeerAsTheBytesTheyCameIn() throws {
        let hub = try makeHub()
        let a = try admitted(to: hub, instance: 1)
        let b = try admitted(to: hub, instance: 2)
        let c = try admitted(to: hub, instance: 3)
        XCTAssertEqual(hub.admittedCount, 3)

        let bytes = try WireFormat.encode(didSave(7))
        try a.writeInbound(ByteBuffer(bytes: bytes))
        for receiver in [b, c] {
            let relayed = try XCTUnwrap(try receiver.readOutbound(as: ByteBuffer.self), "relayed and flushed at the end of the read")
            XCTAssertEqual(Array(relayed.readableBytesView), bytes, "the frame as it came, not encoded again")
        }
        XCTAssertEqual(try received(by: a), [], "never back to its sender")
        XCTAssertEqual(hub.newestToken, 7)
    }

    func testASaveGoesOnlyToThePeersTheSendersBellDidNotWake() throws {
        let hub = try makeHub()
        let bell = Frame.BellUse(device: 41, inode: 7, rings: true, hears: true)
        let sender = try admitted(to: hub, instance: 1, bell: bell)
        let hearsIt = try admitted(to: hub, instance: 2, bell: bell)
        let noBell = try admitted(to: hub, instance: 3)
        let otherBell = try admitted(to: hub, instance: 4, bell: .init(device: 41, inode: 8, rings: true, hears: true))
        let onlyRings = try admitted(to: hub, instance: 5, bell: .init(device: 41, inode: 7, rings: true, hears: false))
        let onlyHears = try admitted(to: hub, instance: 6, bell: .init(device: 41, inode: 7, rings: false, hears: true))

        try send(didSave(7), to: sender)
        XCTAssertEqual(try received(by: hearsIt), [], "woken by the sender's ring already")
        XCTAssertEqual(try received(by: onlyHears), [], "woken by the sender's ring already")
        for (name, peer) in [("no bell", noBell), ("another bell file", otherBell), ("a bell it does not hear", onlyRings)] {
            XCTAssertEqual(try received(by: peer), [didSave(7)], name)
        }
        XCTAssertEqual(hub.peerEntries().map(\.lastToken), [7, 7, 7, 7, 7, 7], "a peer left to the bell counts as told")

        // A sender that cannot ring: its frame goes to everyone, those hearing the bell included.
        try send(didSave(8), to: onlyHears)
        for peer in [sender, hearsIt, noBell, otherBell, onlyRings] {
            XCTAssertEqual(try received(by: peer), [didSave(8)])
        }
        // The database server's doorbell rings no bell: every peer gets its frames.
        let server = try WireFormat.encode(.tokenOnly(storeUUID: storeUUID, token: 9, processID: 0, instanceID: 0))
        hub.relay(ByteBuffer(bytes: server), token: 9, from: nil)
        hub.flushRelayed()
        for peer in [sender, hearsIt, noBell, otherBell, onlyRings, onlyHears] {
            XCTAssertEqual(try received(by: peer), [.tokenOnly(storeUUID: storeUUID, token: 9, processID: 0, instanceID: 0)])
        }
    }

    func testABellUseSurvivesTheWireAndUnknownFlagsAreRefused() throws {
        let bell = Frame.BellUse(device: 2049, inode: 131_074, rings: false, hears: true)
        let frame = hello(5, bell: bell)
        XCTAssertEqual(try WireFormat.decodeBody(WireFormat.encode(frame)[4...]), frame)
        XCTAssertEqual(try WireFormat.decodeBody(WireFormat.encode(hello(5))[4...]), hello(5), "no bell: all zero, read as none")
        var bytes = try WireFormat.encode(frame)
        bytes[bytes.count - 17] = 4  // the flags byte: an unknown bit
        XCTAssertThrowsError(try WireFormat.decodeBody(bytes[4...]))
    }

    func testAFirstFrameThatIsNotAHelloIsRefused() throws {
        let channel = try connect(to: try makeHub())
        try send(didSave(1), to: channel)
        try assertRefused(channel, .malformed)
    }

    func testAHelloForAnotherStoreIsRefused() throws {
        let channel = try connect(to: try makeHub())
        try send(hello(1, store: UUID()), to: channel)
        try assertRefused(channel, .wrongStore)
    }

    func testAProcessOfAnotherUserOutsideTheStoresGroupIsRefusedBeforeItSpeaks() throws {
        let hub = try makeHub()
        let stranger = try connect(to: hub, userID: hub.configuration.allowedOwner &+ 1000, groupID: hub.configuration.allowedGroup &+ 1000)
        try assertRefused(stranger, .notPermitted)
        XCTAssertTrue(hub.peers.isEmpty, "nothing is kept of it")
    }

    func testAConnectionThatSendsNoHelloIsClosedAtTheHandshakeDeadline() throws {
        let hub = try makeHub { $0.handshakeTimeout = .seconds(5) }
        let silent = try connect(to: hub)
        loop.advanceTime(by: .seconds(4))
        XCTAssertTrue(silent.isActive, "not before the deadline")
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(silent.isActive, "closed at the deadline")
        XCTAssertTrue(hub.peers.isEmpty)
    }

    // MARK: - Limits

    func testPeersBeyondTheLimitAreRefusedAndOneLeavingMakesRoom() throws {
        let hub = try makeHub { $0.maximumPeers = 2 }
        let first = try admitted(to: hub, instance: 1)
        _ = try admitted(to: hub, instance: 2)
        let third = try connect(to: hub)
        try send(hello(3), to: third)
        try assertRefused(third, .tooManyPeers)

        try first.close().wait()
        _ = try admitted(to: hub, instance: 4)
        XCTAssertEqual(hub.admittedCount, 2)
    }

    func testConnectionsWaitingForTheirHandshakeAreCappedApartFromThePeers() throws {
        let hub = try makeHub { $0.maximumPendingHandshakes = 1 }
        let first = try connect(to: hub)
        let second = try connect(to: hub)
        try assertRefused(second, .tooManyPeers)

        try send(hello(1), to: first)  // admitted: it no longer waits, so another may
        guard case .welcome? = try received(by: first).first else { return XCTFail("the first is welcomed") }
        _ = try admitted(to: hub, instance: 2)
        XCTAssertEqual(hub.admittedCount, 2)
    }

    func testAFrameAboveTheLimitIsRefusedFromItsLengthAlone() throws {
        let hub = try makeHub { $0.maximumFrameSize = 256 }
        let peer = try admitted(to: hub, instance: 1)
        var announcement = ByteBuffer()
        announcement.writeInteger(UInt32(1 << 20))  // a 1 MiB frame announced; none of it sent
        try peer.writeInbound(announcement)
        try assertRefused(peer, .malformed)
    }

    func testAFrameSplitAcrossReadsIsRelayedWhole() throws {
        let hub = try makeHub()
        let a = try admitted(to: hub, instance: 1)
        let b = try admitted(to: hub, instance: 2)
        let bytes = try WireFormat.encode(didSave(3))
        for chunk in [bytes[..<3], bytes[3..<9], bytes[9...]] { try a.writeInbound(ByteBuffer(bytes: chunk)) }
        XCTAssertEqual(try received(by: b), [didSave(3)])
    }

    // MARK: - Back-pressure

    func testAPeerThatDoesNotReadIsSkippedAndToldToCatchUpOnceItDrains() throws {
        let hub = try makeHub()
        let writer = try admitted(to: hub, instance: 1)
        let stalled = try admitted(to: hub, instance: 2)
        let live = try admitted(to: hub, instance: 3)

        stalled.isWritable = false
        for token in 1...3 { try send(didSave(Int64(token)), to: writer) }
        XCTAssertEqual(try received(by: stalled), [], "nothing is queued for a peer past its backlog")
        XCTAssertEqual(try received(by: live), [didSave(1), didSave(2), didSave(3)], "the others are not held up")
        XCTAssertEqual(hub.droppedFrames, 3)

        stalled.isWritable = true
        stalled.pipeline.fireChannelWritabilityChanged()
        XCTAssertEqual(
            try received(by: stalled), [.tokenOnly(storeUUID: storeUUID, token: 3, processID: 0, instanceID: 0)],
            "one frame with the newest token: it reads the rest from the ledger")
        try send(didSave(4), to: writer)
        XCTAssertEqual(try received(by: stalled), [didSave(4)], "and is relayed to again")
    }

    // MARK: - After the handshake

    func testAPeerMayNotReportForeignWrites() throws {
        let hub = try makeHub()
        let peer = try admitted(to: hub, instance: 1)
        let other = try admitted(to: hub, instance: 2)
        try send(.foreignWrite(storeUUID: storeUUID), to: peer)
        try assertRefused(peer, .malformed)
        XCTAssertEqual(try received(by: other), [], "not relayed: every process would re-read everything")
    }

    func testPingsAreAnsweredAndPeersListed() throws {
        let hub = try makeHub()
        let peer = try admitted(to: hub, instance: 1)
        _ = try admitted(to: hub, instance: 2)
        try send(.ping(99), to: peer)
        try send(.peersRequest, to: peer)
        let answers = try received(by: peer)
        XCTAssertEqual(answers.first, .pong(99))
        guard case .peers(let entries)? = answers.last else { return XCTFail("\(answers)") }
        XCTAssertEqual(entries.map(\.instanceID), [1, 2])
    }
}
