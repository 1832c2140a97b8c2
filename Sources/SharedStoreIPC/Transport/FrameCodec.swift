import NIOCore

/// A frame as it arrived: decoded, and the exact bytes it came in (length prefix included), so
/// the hub can relay it without encoding it again for every receiver.
package struct ReceivedFrame {
    /// The frame.
    package let frame: Frame
    /// The bytes it came in, length prefix included.
    package let bytes: ByteBuffer
}

/// Splits inbound bytes into ``ReceivedFrame``s, refusing an oversized frame before reading it.
/// The hub and the client both use it; outbound frames are encoded with
/// ``ByteBufferAllocator/frame(_:maximumFrameSize:)``.
package struct FrameDecoderHandler: ByteToMessageDecoder {
    package typealias InboundOut = ReceivedFrame
    /// The largest frame accepted, length field included.
    package let maximumFrameSize: Int

    /// A decoder that refuses frames above `maximumFrameSize` bytes before reading them.
    package init(maximumFrameSize: Int) { self.maximumFrameSize = maximumFrameSize }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        let total = Int(length) + 4
        guard total <= maximumFrameSize else { throw WireError.frameTooLarge(announced: total, maximum: maximumFrameSize) }
        guard length >= 2 else { throw WireError.malformed("frame length \(length) is shorter than a header") }
        guard let bytes = buffer.readSlice(length: total), let body = bytes.getBytes(at: bytes.readerIndex + 4, length: Int(length)) else {
            return .needMoreData
        }
        context.fireChannelRead(wrapInboundOut(ReceivedFrame(frame: try WireFormat.decodeBody(body[...]), bytes: bytes)))
        return .continue
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

extension ByteBufferAllocator {
    /// `frame`, encoded into a buffer ready to write.
    ///
    /// - Throws: ``WireError/frameTooLarge(announced:maximum:)`` when it exceeds `maximumFrameSize`.
    func frame(_ frame: Frame, maximumFrameSize: Int) throws(WireError) -> ByteBuffer {
        buffer(bytes: try WireFormat.encode(frame, maximumFrameSize: maximumFrameSize))
    }
}
