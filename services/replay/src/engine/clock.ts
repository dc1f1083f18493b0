/**
 * The replay's clock (issue 25, items 1 and 2): several replays (the markets of one socket, or the sockets of one
 * `session`) merged into one time order, and a merged stream paced by the recorded clock at a speed.
 *
 * The clock is the venue time (`ts`, the default) or the receive time (`received_ts`). A replay is in `ts` order; its
 * receive times need not be (a trade is stamped with the venue's time, a Gemini row with the recorder's), so a
 * replay's place on the receive clock is the largest `received_ts` it has reached: never backwards, and a message is
 * never held behind a later one of its own replay.
 */
import { PageWait } from './replay';
import type { NativeMessage } from './types';

export type ClockField = 'ts' | 'received_ts';

/** A message of a merged stream: which replay it came from, and its time on the clock. */
export interface MergedMessage {
  source: number;
  at: number;
  message: NativeMessage;
}

/**
 * Merges replays into one order by the clock, lazily: each replay's next message is looked at (its times, not its
 * text) before one is chosen, so texts are read — and sequence numbers taken (NativeMessage) — in the merged order.
 * Ties go to the replay listed first; each replay keeps its own order. A replay read page by page (replayPaged) may
 * be waiting for its next page: its PageWait is passed on (the consumer awaits it) before anything is chosen.
 */
export function mergeByClock(replays: readonly Iterator<NativeMessage>[], clock?: ClockField): Generator<MergedMessage>;
export function mergeByClock(
  replays: readonly Iterator<NativeMessage | PageWait>[],
  clock?: ClockField,
): Generator<MergedMessage | PageWait>;
export function* mergeByClock(
  replays: readonly Iterator<NativeMessage | PageWait>[],
  clock: ClockField = 'ts',
): Generator<MergedMessage | PageWait> {
  const reached = replays.map(() => Number.NEGATIVE_INFINITY);
  const heads = replays.map((r) => r.next());
  for (;;) {
    for (let i = 0; i < heads.length; i++)
      for (
        let head = heads[i] as IteratorResult<NativeMessage | PageWait>;
        !head.done && head.value instanceof PageWait;
      ) {
        yield head.value;
        head = heads[i] = (replays[i] as Iterator<NativeMessage | PageWait>).next();
      }
    let pick = -1;
    let pickAt = Number.POSITIVE_INFINITY;
    heads.forEach((head, i) => {
      if (head.done) return;
      const at = Math.max(reached[i] as number, (head.value as NativeMessage)[clock]);
      if (at < pickAt) {
        pick = i;
        pickAt = at;
      }
    });
    if (pick < 0) return;
    const head = heads[pick] as IteratorYieldResult<NativeMessage>;
    reached[pick] = pickAt;
    yield { source: pick, at: pickAt, message: head.value };
    heads[pick] = (replays[pick] as Iterator<NativeMessage | PageWait>).next();
  }
}

export interface PaceOptions {
  /** `max`: as fast as the consumer takes them; a number: recorded time runs this many times faster (1: real time). */
  speed: number | 'max';
  /** The clock time the replay starts at (the window's `from`): offsets are counted from it. */
  from: number;
  /** Wall clock, ms. */
  now: () => number;
  /**
   * Waits about `ms` (never more than MAX_SLEEP_MS at once: a timer's longest delay). It may end early: the stream
   * looks at the wall clock again and sleeps on until the message is due.
   */
  sleep: (ms: number) => Promise<void>;
  /** Called before the stream waits (for its next message's time, or for a page): a consumer flushes what it holds. */
  idle?: () => void;
  /** Once aborted, the stream ends at its next wait (a `sleep` that hears it ends early). */
  signal?: AbortSignal;
  /**
   * Whether a message is still wanted, asked before its wait and after each sleep: one that is not is dropped at once,
   * not released when its time comes (absent: every message is). A `sleep` may end early so that it is asked again.
   */
  wanted?: (m: MergedMessage) => boolean;
}

/**
 * The longest single sleep: Node's timers take at most 2^31 − 1 ms (about 24.8 days) and fire after 1 ms when given
 * more, so a longer wait (a message 36 minutes in at speed 0.001; `from` 25 days before the first row at speed 1) is
 * slept in pieces of at most this.
 */
export const MAX_SLEEP_MS = 2 ** 31 - 1;

/**
 * A merged stream paced by its clock: the message at clock time `at` is released at `start + (at − from) / speed`
 * on the wall clock (`start` when the first is asked for); one that is due already goes at once, so a slow consumer
 * catches up instead of drifting further. A wait longer than a timer can hold is slept in pieces (MAX_SLEEP_MS) until
 * the message is due. `speed: 'max'` releases each as soon as it is asked for. A PageWait among them is awaited, not
 * released. An aborted `signal` ends the stream; a message `wanted` says is no longer wanted is dropped without its wait.
 */
export async function* paced(
  messages: Iterable<MergedMessage | PageWait>,
  o: PaceOptions,
): AsyncGenerator<MergedMessage> {
  if (o.speed !== 'max' && !(o.speed > 0 && Number.isFinite(o.speed))) throw new RangeError(`speed must be > 0 or max`);
  const start = o.now();
  next: for (const m of messages) {
    // A page still being read: wait for it (the message it holds is then released on its own due time).
    if (m instanceof PageWait) {
      o.idle?.();
      await m.ready;
      continue;
    }
    if (o.signal?.aborted) return;
    if (o.wanted?.(m) === false) continue;
    if (o.speed !== 'max') {
      const due = start + (m.at - o.from) / o.speed;
      for (let wait = due - o.now(); wait > 0; wait = due - o.now()) {
        o.idle?.();
        await o.sleep(Math.min(wait, MAX_SLEEP_MS));
        if (o.signal?.aborted) return;
        if (o.wanted?.(m) === false) continue next;
      }
    }
    yield m;
  }
}
