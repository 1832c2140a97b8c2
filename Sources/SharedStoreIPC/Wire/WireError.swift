/// Why bytes from a peer could not be read as frames. The connection that sent them is closed;
/// everyone else is unaffected.
public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A frame announced more bytes than the maximum frame size.
    case frameTooLarge(announced: Int, maximum: Int)
    /// The frame's protocol version is not one this build speaks.
    case unsupportedVersion(UInt8)
    /// The frame's type byte is unknown.
    case unknownFrameType(UInt8)
    /// The frame's payload does not parse; the reason says where.
    case malformed(String)

    /// What went wrong and what happens next.
    public var description: String {
        switch self {
        case .frameTooLarge(let announced, let maximum):
            return "frame of \(announced) bytes exceeds the maximum of \(maximum); the connection is closed"
        case .unsupportedVersion(let version):
            return "protocol version \(version) is not supported (this build speaks \(WireFormat.protocolVersion)); upgrade the older side"
        case .unknownFrameType(let type):
            return "unknown frame type 0x\(String(type, radix: 16)); the connection is closed"
        case .malformed(let reason):
            return "malformed frame: \(reason); the connection is closed"
        }
    }
}
