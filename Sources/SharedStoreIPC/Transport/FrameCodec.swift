import NIOCore

/// A frame as it arrived: decoded, and the exact bytes it came in (length prefix included), so
/// a relay can forward it without encoding it again for every receiver.
struct ReceivedFrame {
    let frame: Frame
    let bytes: ByteBuffer
}

/// Cuts the next whole frame (length prefix included) off `buffer`, refusing an oversized one
/// before reading it; nil until all of it has arrived.
private func nextFrame(_ buffer: inout ByteBuffer, maximumFrameSize: Int) throws(WireError) -> ByteBuffer? {
    guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
    let total = Int(length) + 4
    guard total <= maximumFrameSize else { throw WireError.frameTooLarge(announced: total, maximum: maximumFrameSize) }
    guard length >= 2 else { throw WireError.malformed("frame length \(length) is shorter than a header") }
    return buffer.readSlice(length: total)
}

/// Decodes the body of a whole frame cut by ``nextFrame(_:maximumFrameSize:)``.
private func decodeFrame(_ bytes: ByteBuffer) throws(WireError) -> Frame {
    guard let body = bytes.getBytes(at: bytes.readerIndex + 4, length: bytes.readableBytes - 4) else {
        throw WireError.malformed("a frame ended early")
    }
    return try WireFormat.decodeBody(body[...])
}

/// Splits inbound bytes into ``Frame``s.
struct FrameDecoderHandler: ByteToMessageDecoder {
    typealias InboundOut = Frame
    let maximumFrameSize: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let bytes = try nextFrame(&buffer, maximumFrameSize: maximumFrameSize) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(try decodeFrame(bytes)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Splits inbound bytes into ``ReceivedFrame``s: the hub's decoder, which relays the bytes.
struct RelayFrameDecoderHandler: ByteToMessageDecoder {
    typealias InboundOut = ReceivedFrame
    let maximumFrameSize: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let bytes = try nextFrame(&buffer, maximumFrameSize: maximumFrameSize) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(ReceivedFrame(frame: try decodeFrame(bytes), bytes: bytes)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Encodes outbound ``Frame``s.
struct FrameEncoderHandler: MessageToByteEncoder {
    typealias OutboundIn = Frame
    let maximumFrameSize: Int

    func encode(data: Frame, out: inout ByteBuffer) throws {
        out.writeBytes(try WireFormat.encode(data, maximumFrameSize: maximumFrameSize))
    }
}
