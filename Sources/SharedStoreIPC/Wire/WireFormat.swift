import Foundation

/// The binary framing of the sync protocol: `[length: u32 big-endian][version: u8][type: u8][payload]`,
/// where `length` counts the bytes after itself. See `Sources/SharedStoreIPC/Documentation.docc/WireFormatSpecification.md`.
public enum WireFormat {
    /// The protocol version this build speaks.
    public static let protocolVersion: UInt8 = 3
    /// The longest error message sent or accepted, in characters (longer ones are cut).
    public static let maximumErrorMessageLength = 4_000
    /// The default maximum frame size (length field included): 1 MiB.
    public static let defaultMaximumFrameSize = 1 << 20

    enum FrameType: UInt8 {
        case hello = 0x01, welcome = 0x02, error = 0x03
        case didSave = 0x10, tokenOnly = 0x11, foreignWrite = 0x12
        case ping = 0x20, pong = 0x21
        case peersRequest = 0x30, peers = 0x31
    }

    /// Encodes `frame`.
    ///
    /// - Throws: ``WireError/frameTooLarge(announced:maximum:)`` when it would exceed
    ///   `maximumFrameSize` (send a ``Frame/tokenOnly(storeUUID:token:processID:instanceID:)`` instead), or
    ///   ``WireError/malformed(_:)`` for a string or entity name too long to encode.
    public static func encode(_ frame: Frame, maximumFrameSize: Int = defaultMaximumFrameSize) throws(WireError) -> [UInt8] {
        var w = ByteWriter()
        let type: FrameType
        switch frame {
        case .hello(let h):
            type = .hello
            w.uuid(h.storeUUID)
            w.u32(UInt32(bitPattern: h.processID))
            w.u64(h.instanceID)
            w.i64(h.cursor)
            w.u8(h.protocolVersion)
            try w.string16(h.processName)
            w.u8(h.bell?.flags ?? 0)
            w.u64(h.bell?.device ?? 0)
            w.u64(h.bell?.inode ?? 0)
        case .welcome(let welcome):
            type = .welcome
            w.u32(UInt32(bitPattern: welcome.hubProcessID))
            w.u32(welcome.peers)
        case .error(let code, let message):
            type = .error
            w.u16(code.rawValue)
            try w.string16(String(message.prefix(maximumErrorMessageLength)))
        case .didSave(let save):
            type = .didSave
            w.uuid(save.storeUUID)
            w.i64(save.token)
            w.u32(UInt32(bitPattern: save.processID))
            w.u64(save.instanceID)
            try w.string16(save.author ?? "")
            guard save.changes.count <= Int(UInt16.max) else { throw .malformed("too many entities") }
            w.u16(UInt16(save.changes.count))
            for (entity, changes) in save.changes.sorted(by: { $0.key < $1.key }) {
                let name = Array(entity.utf8)
                guard !name.isEmpty, name.count <= 255 else { throw .malformed("entity name '\(entity)' must be 1-255 bytes") }
                w.u8(UInt8(name.count))
                w.bytes(name)
                try w.keys(changes.inserted)
                try w.keys(changes.updated)
                try w.keys(changes.deleted)
            }
        case .tokenOnly(let uuid, let token, let pid, let instance):
            type = .tokenOnly
            w.uuid(uuid)
            w.i64(token)
            w.u32(UInt32(bitPattern: pid))
            w.u64(instance)
        case .foreignWrite(let uuid):
            type = .foreignWrite
            w.uuid(uuid)
        case .ping(let n):
            type = .ping
            w.u64(n)
        case .pong(let n):
            type = .pong
            w.u64(n)
        case .peersRequest:
            type = .peersRequest
        case .peers(let entries):
            type = .peers
            guard entries.count <= Int(UInt16.max) else { throw .malformed("too many peers") }
            w.u16(UInt16(entries.count))
            for entry in entries {
                w.u32(UInt32(bitPattern: entry.processID))
                w.u64(entry.instanceID)
                w.i64(entry.connectCursor)
                w.i64(entry.lastToken)
                try w.string16(entry.processName)
            }
        }
        let length = 2 + w.buffer.count
        guard length + 4 <= maximumFrameSize else { throw .frameTooLarge(announced: length + 4, maximum: maximumFrameSize) }
        var out = [UInt8]()
        out.reserveCapacity(length + 4)
        out.append(contentsOf: [
            UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length),
        ])
        out.append(protocolVersion)
        out.append(type.rawValue)
        out.append(contentsOf: w.buffer)
        return out
    }

    /// Decodes one frame's version, type and payload (the bytes after the length field).
    static func decodeBody(_ body: ArraySlice<UInt8>) throws(WireError) -> Frame {
        guard body.count >= 2 else { throw .malformed("frame shorter than its header") }
        let version = body[body.startIndex]
        guard version == protocolVersion else { throw .unsupportedVersion(version) }
        let rawType = body[body.startIndex + 1]
        guard let type = FrameType(rawValue: rawType) else { throw .unknownFrameType(rawType) }
        var r = ByteReader(body.dropFirst(2))
        let frame: Frame
        switch type {
        case .hello:
            let uuid = try r.uuid()
            let pid = Int32(bitPattern: try r.u32())
            let instance = try r.u64()
            let cursor = try r.i64()
            let clientVersion = try r.u8()
            let name = try r.string16()
            let flags = try r.u8()
            let device = try r.u64()
            let inode = try r.u64()
            guard flags & ~3 == 0 else { throw .malformed("unknown bell flags \(flags)") }
            let bell = flags == 0 ? nil : Frame.BellUse(device: device, inode: inode, rings: flags & 1 != 0, hears: flags & 2 != 0)
            frame = .hello(
                .init(protocolVersion: clientVersion, storeUUID: uuid, processID: pid, instanceID: instance, processName: name, cursor: cursor, bell: bell))
        case .welcome:
            frame = .welcome(.init(hubProcessID: Int32(bitPattern: try r.u32()), peers: try r.u32()))
        case .error:
            let code = Frame.ErrorCode(rawValue: try r.u16()) ?? .unknown
            // As the encoder does: a message is at most 4,000 characters.
            frame = .error(code: code, message: String(try r.string16().prefix(WireFormat.maximumErrorMessageLength)))
        case .didSave:
            let uuid = try r.uuid()
            let token = try r.i64()
            let pid = Int32(bitPattern: try r.u32())
            let instance = try r.u64()
            let author = try r.string16()
            let count = Int(try r.u16())
            var changes: [String: Frame.EntityChanges] = [:]
            for _ in 0..<count {
                let length = Int(try r.u8())
                guard length > 0 else { throw .malformed("empty entity name") }
                guard let name = String(validating: try r.bytes(length), as: UTF8.self) else { throw .malformed("entity name is not UTF-8") }
                guard changes[name] == nil else { throw .malformed("entity '\(name)' listed twice") }
                changes[name] = Frame.EntityChanges(inserted: try r.keys(), updated: try r.keys(), deleted: try r.keys())
            }
            guard token > 0 else { throw .malformed("token \(token) is not positive") }
            frame = .didSave(
                .init(storeUUID: uuid, token: token, processID: pid, instanceID: instance, author: author.isEmpty ? nil : author, changes: changes))
        case .tokenOnly:
            let uuid = try r.uuid()
            let token = try r.i64()
            let pid = Int32(bitPattern: try r.u32())
            let instance = try r.u64()
            guard token > 0 else { throw .malformed("token \(token) is not positive") }
            frame = .tokenOnly(storeUUID: uuid, token: token, processID: pid, instanceID: instance)
        case .foreignWrite:
            frame = .foreignWrite(storeUUID: try r.uuid())
        case .ping:
            frame = .ping(try r.u64())
        case .pong:
            frame = .pong(try r.u64())
        case .peersRequest:
            frame = .peersRequest
        case .peers:
            let count = Int(try r.u16())
            var entries: [Frame.PeerEntry] = []
            for _ in 0..<count {
                let pid = Int32(bitPattern: try r.u32())
                let instance = try r.u64()
                let cursor = try r.i64()
                let last = try r.i64()
                entries.append(.init(processID: pid, instanceID: instance, processName: try r.string16(), connectCursor: cursor, lastToken: last))
            }
            frame = .peers(entries)
        }
        guard r.isAtEnd else { throw .malformed("\(r.remaining) unexpected bytes after the payload") }
        return frame
    }
}

/// Splits a byte stream into frames. Feed it whatever arrives; take frames while there are any.
public struct FrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// The largest frame accepted (length field included).
    public let maximumFrameSize: Int

    /// Creates a decoder that refuses frames above `maximumFrameSize` bytes.
    public init(maximumFrameSize: Int = WireFormat.defaultMaximumFrameSize) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 4096 && start > buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``WireError`` when the stream is not valid; the stream cannot continue after that.
    public mutating func next() throws(WireError) -> Frame? {
        guard buffer.count - start >= 4 else { return nil }
        let b = buffer[start..<(start + 4)]
        let length = b.reduce(0) { ($0 << 8) | Int($1) }
        guard length + 4 <= maximumFrameSize else { throw .frameTooLarge(announced: length + 4, maximum: maximumFrameSize) }
        guard length >= 2 else { throw .malformed("frame length \(length) is shorter than a header") }
        guard buffer.count - start >= 4 + length else { return nil }
        let body = buffer[(start + 4)..<(start + 4 + length)]
        start += 4 + length
        return try WireFormat.decodeBody(body)
    }

    /// Bytes received but not yet part of a complete frame.
    public var pendingByteCount: Int { buffer.count - start }
}

struct ByteWriter {
    var buffer: [UInt8] = []

    mutating func u8(_ v: UInt8) { buffer.append(v) }
    mutating func u16(_ v: UInt16) {
        buffer.append(UInt8(v >> 8))
        buffer.append(UInt8(v & 0xFF))
    }
    mutating func u32(_ v: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) } }
    mutating func u64(_ v: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) } }
    mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    mutating func bytes(_ b: [UInt8]) { buffer.append(contentsOf: b) }
    mutating func uuid(_ u: UUID) { withUnsafeBytes(of: u.uuid) { buffer.append(contentsOf: $0) } }
    mutating func string16(_ s: String) throws(WireError) {
        let utf8 = Array(s.utf8)
        guard utf8.count <= Int(UInt16.max) else { throw .malformed("string of \(utf8.count) bytes is too long") }
        u16(UInt16(utf8.count))
        bytes(utf8)
    }
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        buffer.append(UInt8(v))
    }
    /// Sorted, distinct, positive keys: a count, the first key, then the gaps.
    mutating func keys(_ keys: [Int64]) throws(WireError) {
        varint(UInt64(keys.count))
        var previous: Int64 = 0
        for key in keys {
            guard key > previous else { throw .malformed("keys must be positive, sorted and distinct") }
            varint(UInt64(key - previous))
            previous = key
        }
    }
}

struct ByteReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }
    var remaining: Int { bytes.count }

    mutating func bytes(_ n: Int) throws(WireError) -> ArraySlice<UInt8> {
        guard n >= 0, bytes.count >= n else { throw .malformed("payload ends early (needed \(n) more bytes, have \(bytes.count))") }
        let result = bytes.prefix(n)
        bytes = bytes.dropFirst(n)
        return result
    }
    mutating func u8() throws(WireError) -> UInt8 { try bytes(1).first ?? 0 }
    mutating func u16() throws(WireError) -> UInt16 { try bytes(2).reduce(0) { ($0 << 8) | UInt16($1) } }
    mutating func u32() throws(WireError) -> UInt32 { try bytes(4).reduce(0) { ($0 << 8) | UInt32($1) } }
    mutating func u64() throws(WireError) -> UInt64 { try bytes(8).reduce(0) { ($0 << 8) | UInt64($1) } }
    mutating func i64() throws(WireError) -> Int64 { Int64(bitPattern: try u64()) }
    mutating func uuid() throws(WireError) -> UUID {
        let b = Array(try bytes(16))
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
    mutating func string16() throws(WireError) -> String {
        let length = Int(try u16())
        guard let s = String(validating: try bytes(length), as: UTF8.self) else { throw .malformed("string is not UTF-8") }
        return s
    }
    mutating func varint() throws(WireError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            guard shift < 64 else { throw .malformed("varint longer than 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }
    mutating func keys() throws(WireError) -> [Int64] {
        let count = try varint()
        // Each key takes at least one byte: a count above the bytes left is a lie.
        guard count <= UInt64(bytes.count) else { throw .malformed("key count \(count) exceeds the payload") }
        var keys: [Int64] = []
        keys.reserveCapacity(Int(count))
        var previous: Int64 = 0
        for _ in 0..<count {
            let gap = try varint()
            guard gap > 0, gap <= UInt64(Int64.max - previous) else { throw .malformed("key gap \(gap) is out of range") }
            previous += Int64(gap)
            keys.append(previous)
        }
        return keys
    }
}
