/// A 64-bit FNV-1a checksum: cheap, stable across runs and processes (unlike `Hasher`), for
/// model hashes, digests compared between processes, file identities and short stable names.
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    /// The checksum of `bytes`.
    package init<S: Sequence>(_ bytes: S) where S.Element == UInt8 { combine(bytes) }

    /// Mixes in `bytes`.
    package mutating func combine<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    }

    /// The checksum as 16 hex digits.
    package var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
