import Foundation

/// The changes of one ledger transaction as one value, stored in its row (`changes`, a BLOB in
/// SQLite and a `bytea` in PostgreSQL): a commit appends one ledger row, not a row per entity and
/// kind with an index beside it.
///
/// Layout (all integers unsigned LEB128 varints unless said otherwise):
///
/// ```
/// version          1 byte, 1
/// then, per group (entity, kind and, for updates, the changed properties), until the end:
///   kind           1 byte: 0 insert, 1 update, 2 delete
///   entity         length, then UTF-8
///   properties     length (0: none), then UTF-8: the changed properties' names, sorted, comma-separated
///   count          the number of primary keys
///   primary keys   each as the zigzag varint of its difference from the one before (the first from 0)
/// ```
///
/// Consecutive keys, the shape of an import, take one byte each.
package enum LedgerChangeEncoding {
    /// The layout version this code writes and reads.
    static let version: UInt8 = 1

    /// `groups` in one value, groups ordered by entity, kind and properties (so equal changes
    /// encode equally).
    package static func encode(_ groups: [LedgerGroup: [Int64]]) -> Data {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(16 + groups.reduce(0) { $0 + 24 + $1.value.count * 2 })
        let ordered = groups.sorted { a, b in
            (a.key.entity, a.key.kind.rawValue, a.key.properties ?? "") < (b.key.entity, b.key.kind.rawValue, b.key.properties ?? "")
        }
        for (group, keys) in ordered {
            bytes.append(UInt8(group.kind.rawValue))
            appendText(group.entity, to: &bytes)
            appendText(group.kind == .update ? group.properties ?? "" : "", to: &bytes)
            appendVarint(UInt64(keys.count), to: &bytes)
            var previous: Int64 = 0
            for key in keys {
                let delta = key &- previous
                appendVarint(UInt64(bitPattern: (delta << 1) ^ (delta >> 63)), to: &bytes)
                previous = key
            }
        }
        return Data(bytes)
    }

    /// Calls `body` with each group of `data`: its entity, kind, changed property names (updates
    /// only) and primary keys. Throws ``AmbarError/storeDamaged(path:reason:)`` for a value this
    /// layout cannot read (written outside Ambar, or by a newer Ambar).
    static func decode(_ data: Data, location: String, _ body: (String, LedgerEntry.Kind, [String], [Int64]) throws(AmbarError) -> Void) throws(AmbarError) {
        let parsed = data.withUnsafeBytes { raw in Result { () throws(LedgerDecodingFailure) in try parse(raw) } }
        try deliver(parsed, location: location, body)
    }

    /// ``decode(_:location:_:)`` straight from bytes the caller holds (a column of a statement),
    /// without copying them first.
    static func decode(
        bytes: UnsafeRawBufferPointer, location: String, _ body: (String, LedgerEntry.Kind, [String], [Int64]) throws(AmbarError) -> Void
    ) throws(AmbarError) {
        try deliver(Result { () throws(LedgerDecodingFailure) in try parse(bytes) }, location: location, body)
    }

    private static func deliver(
        _ parsed: Result<[(entity: String, kind: LedgerEntry.Kind, properties: [String], keys: [Int64])], LedgerDecodingFailure>, location: String,
        _ body: (String, LedgerEntry.Kind, [String], [Int64]) throws(AmbarError) -> Void
    ) throws(AmbarError) {
        let groups: [(entity: String, kind: LedgerEntry.Kind, properties: [String], keys: [Int64])]
        switch parsed {
        case .success(let parsedGroups): groups = parsedGroups
        case .failure(let error): throw .storeDamaged(path: location, reason: "a ledger transaction's changes cannot be read: \(error.reason)")
        }
        for group in groups { try body(group.entity, group.kind, group.properties, group.keys) }
    }

    /// The groups of `bytes`, in order.
    private static func parse(_ bytes: UnsafeRawBufferPointer) throws(LedgerDecodingFailure) -> [(
        entity: String, kind: LedgerEntry.Kind, properties: [String], keys: [Int64]
    )] {
        var reader = Reader(bytes: bytes)
        var groups: [(entity: String, kind: LedgerEntry.Kind, properties: [String], keys: [Int64])] = []
        guard let first = reader.byte() else { return [] }
        guard first == version else {
            throw LedgerDecodingFailure("layout version \(first), which this Ambar cannot read (it reads \(version)): upgrade Ambar")
        }
        while !reader.isAtEnd {
            guard let kindByte = reader.byte(), let kind = LedgerEntry.Kind(rawValue: Int(kindByte)) else {
                throw LedgerDecodingFailure("an unknown kind of change")
            }
            let entity = try reader.text()
            let properties = try reader.text()
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else { throw LedgerDecodingFailure("more keys than bytes") }
            var keys: [Int64] = []
            keys.reserveCapacity(Int(count))
            var previous: Int64 = 0
            for _ in 0..<count {
                let zigzag = try reader.varint()
                previous = previous &+ (Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
                keys.append(previous)
            }
            groups.append((entity, kind, properties.isEmpty ? [] : properties.split(separator: ",").map(String.init), keys))
        }
        return groups
    }

    /// Re-encodes `data` with each entity and property name passed through `rename`
    /// (`(entity, property?) → new name`), for a migration that renames them.
    package static func renaming(
        _ data: Data, location: String, entity renameEntity: (String) -> String, properties renameProperties: (String, [String]) -> [String]
    )
        throws(AmbarError) -> Data
    {
        var groups: [LedgerGroup: [Int64]] = [:]
        try decode(data, location: location) { entity, kind, names, keys in
            let properties = kind == .update ? renameProperties(entity, names).joined(separator: ",") : nil
            groups[LedgerGroup(entity: renameEntity(entity), kind: kind, properties: properties), default: []] += keys
        }
        return encode(groups)
    }

    /// Layout 1's primary keys: little-endian 64-bit integers, packed.
    package static func unpackLayout1(_ data: Data) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(data.count / 8)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                result.append(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
                offset += 8
            }
        }
        return result
    }

    private static func appendText(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = text.utf8
        appendVarint(UInt64(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Reads the layout's bytes in order.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }
        var remaining: Int { bytes.count - offset }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(LedgerDecodingFailure) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard let byte = byte() else { throw LedgerDecodingFailure("it ends inside a number") }
                guard shift < 64 else { throw LedgerDecodingFailure("a number longer than 64 bits") }
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        mutating func text() throws(LedgerDecodingFailure) -> String {
            let length = try varint()
            guard length <= UInt64(remaining) else { throw LedgerDecodingFailure("it ends inside a name") }
            let end = offset + Int(length)
            defer { offset = end }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self)
        }
    }
}

/// Why a ledger value could not be read.
private struct LedgerDecodingFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
