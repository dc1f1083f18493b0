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
    const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const header = frameHeader(data.length);
    return new Frame(Buffer.concat([header, data], header.length + data.length));
  }
}

/** The header of an unmasked final text frame of `length` bytes. */
export function frameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x81, length]);
  if (length < 65_536) {
    const h = Buffer.allocUnsafe(4);
    h[0] = 0x81;
    h[1] = 126;
    h.writeUInt16BE(length, 2);
    return h;
  }
  const h = Buffer.allocUnsafe(10);
  h[0] = 0x81;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(length), 2);
  return h;
}
