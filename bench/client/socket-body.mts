/**
 * A body served from memory as it would come off a socket: the bytes in views of at most 64 KiB (what Node reads from a
 * socket at a time), none copied. `new Response(bytes)` instead hands the reader one chunk of the whole body after
 * copying it (the Fetch spec's copy of a buffer source): no caller reading over the network gets that.
 */
export function socketBody(bytes: Uint8Array, size = 65_536): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}
