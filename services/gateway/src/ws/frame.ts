/**
 * WebSocket text frames the gateway writes itself (RFC 6455 §5.2: FIN, opcode 1, server frames unmasked). A message
 * every client of a topic gets is framed once and the same bytes are written to every client's socket; nothing is
 * copied per client. Written only while the `ws` connection is open, with permessage-deflate off, so `ws`'s own
 * frames (pings, close) and these interleave whole, in the order they are written.
 */

/** A message already framed: written as it is. */
export class Frame {
  constructor(readonly bytes: Buffer) {}

  static text(payload: string | Buffer): Frame {
    return new Frame(Frame.encode(payload));
  }

  /** The frame's bytes: header and payload in one buffer (one allocation, one write). */
  static encode(payload: string | Buffer): Buffer {
    const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    const head = length < 126 ? 2 : length < 65_536 ? 4 : 10;
    const out = Buffer.allocUnsafe(head + length);
    writeHeader(out, length);
    if (typeof payload === 'string') out.write(payload, head);
    else payload.copy(out, head);
    return out;
  }
}

/** The header of an unmasked final text frame of `length` bytes, at the start of `out`. */
function writeHeader(out: Buffer, length: number): void {
  out[0] = 0x81;
  if (length < 126) {
    out[1] = length;
  } else if (length < 65_536) {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 127;
    out.writeBigUInt64BE(BigInt(length), 2);
  }
}
