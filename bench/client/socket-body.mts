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

/**
 * What the benchmarks' memory `fetch` answers with: `bytes` as a socket gives them (socketBody), or with
 * BENCH_WHOLE_BODY=1 the bytes themselves, which `new Response` hands over in one copied chunk (as the benchmarks did
 * before 2026-11-28).
 */
export function servedBody(bytes: Uint8Array): ReadableStream<Uint8Array> | Uint8Array {
  return process.env.BENCH_WHOLE_BODY === '1' ? bytes : socketBody(bytes);
}
