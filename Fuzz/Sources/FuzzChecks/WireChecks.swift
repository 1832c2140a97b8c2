import Foundation
import NIOCore
import NIOEmbedded
import SharedStoreIPC

/// What the wire fuzzer checks for one input; shared by the libFuzzer target and the replay test.
public enum WireChecks {
    /// The store the fuzzed hub serves.
    public static let storeUUID = UUID(uuid: (0x6A, 0x0A, 0x7E, 0x2C, 0x4C, 0x2B, 0x4E, 0x43, 0x9C, 0x55, 0x0D, 0x1B, 0x2A, 0x3C, 0x4D, 0x5E))

    /// Feeds `bytes`, in two pieces, to the decoder production uses — the NIO
    /// `FrameDecoderHandler` in a channel pipeline (an `EmbeddedChannel`) with the default maximum
    /// frame size — and checks what comes out:
    /// - the pipeline either yields frames, waits for more, or fails with a ``WireError`` — it never
    ///   traps, whatever the bytes;
    /// - the bytes each frame arrived in (what the hub relays) decode to the same frame;
    /// - every frame re-encodes (a frame that does not is reported), to bytes that decode equal to it;
    /// - the hub's handshake gives a verdict on the first frame, and a did-save turns into a
    ///   notification without trapping.
    ///
    /// Returns a description of the first broken property, or nil when all hold.
    public static func check(_ bytes: [UInt8], maximumFrameSize: Int = WireFormat.defaultMaximumFrameSize) -> String? {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        do {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoderHandler(maximumFrameSize: maximumFrameSize)))
        } catch {
            return "the decoder could not be added to a pipeline: \(error)"
        }
        // Split where the first byte says, so that partial frames are exercised too.
        let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        var received: [ReceivedFrame] = []
        for piece in [bytes[..<split], bytes[split...]] {
            do {
                try channel.writeInbound(channel.allocator.buffer(bytes: piece))
            } catch {
                break  // a refusal is a fine outcome for arbitrary bytes
            }
            while let frame = try? channel.readInbound(as: ReceivedFrame.self) { received.append(frame) }
        }
        for (n, item) in received.enumerated() {
            let frame = item.frame
            if n == 0 { _ = Handshake.verdict(on: frame, storeUUID: storeUUID) }
            if case .didSave(let save) = frame { _ = save.notification }
            var relayed = FrameDecoder(maximumFrameSize: maximumFrameSize)
            relayed.append(item.bytes.readableBytesView)
            guard (try? relayed.next()) == frame else { return "frame \(n)'s own bytes do not decode to it" }
            let encoded: [UInt8]
            do {
                encoded = try WireFormat.encode(frame, maximumFrameSize: maximumFrameSize)
            } catch {
                return "frame \(n) does not re-encode: \(error) (\(frame))"
            }
            var again = FrameDecoder(maximumFrameSize: maximumFrameSize)
            again.append(encoded)
            let decoded: Frame?
            do {
                decoded = try again.next()
            } catch {
                return "frame \(n) re-encoded to bytes that do not decode: \(error)"
            }
            guard decoded == frame else { return "frame \(n) does not round-trip: \(frame) → \(String(describing: decoded))" }
        }
        return nil
    }
}
