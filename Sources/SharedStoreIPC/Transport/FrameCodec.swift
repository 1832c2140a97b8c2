import NIOCore

/// Splits inbound bytes into ``Frame``s (refusing oversized ones before reading them).
struct FrameDecoderHandler: ByteToMessageDecoder {
    typealias InboundOut = Frame
    let maximumFrameSize: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        let total = Int(length) + 4
        guard total <= maximumFrameSize else { throw WireError.frameTooLarge(announced: total, maximum: maximumFrameSize) }
        guard length >= 2 else { throw WireError.malformed("frame length \(length) is shorter than a header") }
        guard buffer.readableBytes >= total else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        guard let body = buffer.readBytes(length: Int(length)) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(try WireFormat.decodeBody(body[...])))
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
