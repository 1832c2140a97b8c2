import Foundation
import SharedStoreIPC

/// What the wire fuzzer checks for one input; shared by the libFuzzer target and the replay test.
public enum WireChecks {
    /// The store the fuzzed hub serves.
    public static let storeUUID = UUID(uuid: (0x6A, 0x0A, 0x7E, 0x2C, 0x4C, 0x2B, 0x4E, 0x43, 0x9C, 0x55, 0x0D, 0x1B, 0x2A, 0x3C, 0x4D, 0x5E))

    /// Feeds `bytes` to a frame decoder in two pieces and checks what comes out:
    /// - the decoder either yields frames, waits for more, or throws a ``WireError`` — it never
    ///   traps, whatever the bytes;
    /// - every frame decoded re-encodes to a frame that decodes equal to it;
    /// - the hub's handshake gives a verdict on the first frame, and a did-save turns into a
    ///   notification without trapping.
    ///
    /// Returns a description of the first broken property, or nil when all hold.
    public static func check(_ bytes: [UInt8]) -> String? {
        var decoder = FrameDecoder(maximumFrameSize: 64 * 1024)
        // Split where the first byte says, so that partial frames are exercised too.
        let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        decoder.append(bytes[..<split])
        var frames: [Frame] = []
        do {
            while let frame = try decoder.next() { frames.append(frame) }
            decoder.append(bytes[split...])
            while let frame = try decoder.next() { frames.append(frame) }
        } catch {
            // A refusal is a fine outcome for arbitrary bytes.
        }
        for (n, frame) in frames.enumerated() {
            if n == 0 { _ = Handshake.verdict(on: frame, storeUUID: storeUUID) }
            if case .didSave(let save) = frame { _ = save.notification }
            guard let encoded = try? WireFormat.encode(frame, maximumFrameSize: 1 << 24) else { continue }
            var again = FrameDecoder(maximumFrameSize: 1 << 24)
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
