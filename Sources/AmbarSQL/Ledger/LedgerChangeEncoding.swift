import AmbarCore
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
///
/// A transaction that deleted objects whose attributes keep their values
/// (``AttributeDescription/preservesValueOnDeletion``) is written as version 2: the same groups,
/// then one item per deleted object:
///
/// ```
///   kind           1 byte, 3 (a tombstone)
///   entity         length, then UTF-8
///   primary key    zigzag varint
///   values         length, then UTF-8: a JSON object of attribute name → value
/// ```
///
/// Version 1 stays what every transaction without tombstones is written as, so a store's ledger
/// stays readable by an Ambar that reads version 1 until tombstones are used.
package enum LedgerChangeEncoding {
    /// The layout version of transactions without tombstones.
    static let version: UInt8 = 1
    /// The layout version of transactions with tombstones.
    static let tombstoneVersion: UInt8 = 2
    /// The kind byte of a tombstone.
    private static let tombstoneKind: UInt8 = 3

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

    /// `entry`'s groups and tombstones in one value.
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` when a preserved value cannot be written
    ///   (nothing is saved then).
    package static func encode(_ entry: LedgerEntry) throws(AmbarError) -> Data {
        guard !entry.tombstones.isEmpty else { return encode(entry.groups) }
        var data = encode(entry.groups)
        data[data.startIndex] = tombstoneVersion
        var bytes: [UInt8] = []
        for tombstone in entry.tombstones {
            let json: Data
            do {
                json = try tombstoneEncoder.encode(tombstone.values)
            } catch {
                throw .invalidArgument("the preserved values of a deleted \(tombstone.entity) cannot be written to the ledger: \(error)")
            }
            bytes.append(tombstoneKind)
            appendText(tombstone.entity, to: &bytes)
            appendVarint(UInt64(bitPattern: (tombstone.primaryKey << 1) ^ (tombstone.primaryKey >> 63)), to: &bytes)
            appendVarint(UInt64(json.count), to: &bytes)
            bytes.append(contentsOf: json)
        }
        data.append(contentsOf: bytes)
        return data
    }

    private static var tombstoneEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    private static var tombstoneDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }

    /// A group of changes as it is read.
    private typealias ParsedGroup = (entity: String, kind: LedgerEntry.Kind, properties: [String], keys: [Int64])

    /// Calls `body` with each group of `data`: its entity, kind, changed property names (updates
    /// only) and primary keys, and `tombstone` with each tombstone. Throws
    /// ``AmbarError/storeDamaged(path:reason:)`` for a value this layout cannot read (written
    /// outside Ambar, or by a newer Ambar).
    static func decode(
        _ data: Data, location: String, tombstone: ((LedgerTombstone) -> Void)? = nil,
        _ body: (String, LedgerEntry.Kind, [String], [Int64]) throws(AmbarError) -> Void
    ) throws(AmbarError) {
        let parsed = data.withUnsafeBytes { raw in Result { () throws(LedgerDecodingFailure) in try parse(raw) } }
        try deliver(parsed, location: location, tombstone: tombstone, body)
    }

    /// ``decode(_:location:tombstone:_:)`` straight from bytes the caller holds (a column of a
    /// statement), without copying them first.
    static func decode(
        bytes: UnsafeRawBufferPointer, location: String, tombstone: ((LedgerTombstone) -> Void)? = nil,
        _ body: (String, LedgerEntry.Kind, [String], [Int64]) throws(AmbarError) -> Void
    ) throws(AmbarError) {
        try deliver(Result { () throws(LedgerDecodingFailure) in try parse(bytes) }, location: location, tombstone: tombstone, body)
    }

    private static func deliver(
        _ parsed: Result<(groups: [ParsedGroup], tombstones: [LedgerTombstone]), LedgerDecodingFailure>, location: String,
        tombstone: ((LedgerTombstone) -> Void)?, _ body: (String, LedgerEntry.Kind, [String], [Int64]) throws(AmbarError) -> Void
    ) throws(AmbarError) {
        let read: (groups: [ParsedGroup], tombstones: [LedgerTombstone])
        switch parsed {
        case .success(let value): read = value
        case .failure(let error): throw .storeDamaged(path: location, reason: "a ledger transaction's changes cannot be read: \(error.reason)")
        }
        for group in read.groups { try body(group.entity, group.kind, group.properties, group.keys) }
        if let tombstone { read.tombstones.forEach(tombstone) }
    }

    /// The groups and tombstones of `bytes`, in order.
    private static func parse(_ bytes: UnsafeRawBufferPointer) throws(LedgerDecodingFailure) -> (groups: [ParsedGroup], tombstones: [LedgerTombstone]) {
        var reader = Reader(bytes: bytes)
        var groups: [ParsedGroup] = []
        var tombstones: [LedgerTombstone] = []
        guard let first = reader.byte() else { return ([], []) }
        guard first == version || first == tombstoneVersion else {
            throw LedgerDecodingFailure("layout version \(first), which this Ambar cannot read (it reads \(version) and \(tombstoneVersion)): upgrade Ambar")
        }
        while !reader.isAtEnd {
            guard let kindByte = reader.byte() else { throw LedgerDecodingFailure("an unknown kind of change") }
            if kindByte == tombstoneKind && first == tombstoneVersion {
                let entity = try reader.text()
                let zigzag = try reader.varint()
                let primaryKey = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
                let json = try reader.text()
                let values: [String: AttributeValue]
                do {
                    values = try tombstoneDecoder.decode([String: AttributeValue].self, from: Data(json.utf8))
                } catch {
                    throw LedgerDecodingFailure("a deleted \(entity)'s preserved values are not valid JSON (\(error))")
                }
                tombstones.append(LedgerTombstone(entity: entity, primaryKey: primaryKey, values: values))
                continue
            }
            guard let kind = LedgerEntry.Kind(rawValue: Int(kindByte)) else {
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
        return (groups, tombstones)
    }

    /// Re-encodes `data` with each entity and property name passed through `rename`
    /// (`(entity, property?) → new name`), for a migration that renames them.
    package static func renaming(
        _ data: Data, location: String, entity renameEntity: (String) -> String, properties renameProperties: (String, [String]) -> [String]
    )
        throws(AmbarError) -> Data
    {
        var entry = LedgerEntry()
        var tombstones: [LedgerTombstone] = []
        try decode(data, location: location, tombstone: { tombstones.append($0) }) { entity, kind, names, keys in
            let properties = kind == .update ? renameProperties(entity, names).joined(separator: ",") : nil
            entry.groups[LedgerGroup(entity: renameEntity(entity), kind: kind, properties: properties), default: []] += keys
        }
        entry.tombstones = tombstones.map { tombstone in
            let names = Array(tombstone.values.keys)
            let renamed = renameProperties(tombstone.entity, names)
            var values: [String: AttributeValue] = [:]
            for (old, new) in zip(names, renamed) { values[new] = tombstone.values[old] }
            return LedgerTombstone(entity: renameEntity(tombstone.entity), primaryKey: tombstone.primaryKey, values: values)
        }
        return try encode(entry)
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
