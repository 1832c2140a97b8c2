import Foundation

/// The hub's side of the handshake, as a pure decision: what it answers to a connection's first
/// frame. The hub and the wire fuzzer both use it.
public enum Handshake {
    /// The hub's verdict on a first frame.
    public enum Verdict: Sendable, Equatable {
        /// Admit the peer that said `hello`.
        case admit(Frame.Hello)
        /// Refuse the connection with this code and reason (sent as an `error` frame).
        case refuse(Frame.ErrorCode, String)
    }

    /// Admits a `hello` of this protocol version for `storeUUID`; refuses anything else, saying why.
    public static func verdict(on first: Frame, storeUUID: UUID) -> Verdict {
        guard case .hello(let hello) = first else {
            return .refuse(.malformed, "the first frame must be hello")
        }
        guard hello.protocolVersion == WireFormat.protocolVersion else {
            return .refuse(.unsupportedVersion, "protocol version \(hello.protocolVersion) is not supported; the hub speaks \(WireFormat.protocolVersion)")
        }
        guard hello.storeUUID == storeUUID else {
            return .refuse(.wrongStore, "this hub serves store \(storeUUID), not \(hello.storeUUID)")
        }
        return .admit(hello)
    }
}
