/**
 * Redundant recording put together (issue 27; docs/operations.md, "Two recorders"): the recorder's Redis, its lease
 * (term), the owner map, the standby buffer and the routing sink in front of the writer, and the controller that moves
 * tickers between recorders. `startRedundancy` is called by `startRecorder` when RECORDER_REDIS_URL is set; without it
 * the recorder is today's solo recorder and none of this exists.
 *
 * The order it imposes on the start (controller.ts, "Start order"): the lease (a new term) before the writer (its
 * batches and query ids carry the term, its inserts pass the lease's gate), the writer's spool replayed through the
 * fence of each earlier term it holds (`resolveTerm`: the hand-overs away from that term), then the venues, each
 * asking the controller for its tickers' roles before it reads their resume points.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import type { HandoverRow as StoredHandover, RecorderStore } from '@depthgate/history-store';
import { ASK, BID, formatDecimal, LocalBook } from '@depthgate/feeds';
import { createRedisClient, waitForRedis, type Logger, type Redis, type Registry } from '@depthgate/service-kit';
import { recorderRedisTarget, type RecorderConfig } from '../config';
import type { RowSink } from '../rows';
import type { TickerRecorder } from '../ticker';
import type { Venue } from '../venues/venue';
import { Controller } from './controller';
import { Lease } from './lease';
import { RedisOwnership } from './ownership';
import type { ControlStore, ControlWriter, HandoverRow } from './pieces';
import { RoutingSink } from './routing-sink';
import { fenceOf, type Fence, type FenceInterval } from './spool-fence';
import { StandbyBuffer } from './standby-buffer';
import { bookDigest } from './book-digest';

/**
 * The fence of a term's spool from the hand-overs from and to it: a ticker taken over at S is another term's from
 * S − 1 on (every unlanded row of it has ts ≥ S − 1 = L, the landed end, and the new owner wrote ms L again), one it
 * released or offered from S on, until it was handed back to the term at S′ (from S′ − 1 on it is the term's again).
 */
export function fenceOfHandovers(term: number, rows: readonly HandoverRow[]): Fence | undefined {
  if (rows.length === 0) return undefined;
  const intervals = new Map<string, FenceInterval[]>();
  for (const r of [...rows].sort((a, b) => a.ts - b.ts)) {
    const k = `${r.exchange}\t${r.ticker}`;
    let list = intervals.get(k);
    if (!list) intervals.set(k, (list = []));
    const open = list.at(-1);
    if (r.fromTerm === term && (open === undefined || open.until !== Infinity)) {
      // A takeover continued from what landed (the unlanded rows have ts >= S - 1 and ms S - 1 was written again); a
      // release or an offer from what the term produced (its spooled rows are all before S).
      list.push({ from: r.kind === 'takeover' ? r.ts - 1 : r.ts, until: Infinity });
    } else if (r.toTerm === term && open !== undefined && open.until === Infinity) {
      open.until = r.ts - 1;
    }
  }
  return fenceOf(intervals);
}

/** The store as the controller speaks it (its rows in the recorder's camelCase, sides as the books' codes). */
function controlStore(store: RecorderStore, venueClock: (exchange: ExchangeKey) => boolean): ControlStore {
  const fromStored = (r: StoredHandover): HandoverRow => ({
    exchange: r.exchange,
    ticker: r.ticker,
    ts: r.ts,
    fromTerm: r.from_term,
    toTerm: r.to_term,
    kind: r.kind,
    detectedAt: r.detected_at,
  });
  return {
    async landedEnds(exchange, tickers) {
      const ends = await store.landedEnds(exchange, tickers);
      return new Map(
        [...ends].map(([ticker, end]) => [
          ticker,
          {
            ...end,
            deltasAtLast: end.deltasAtLast.map((d) => ({ ...d, side: d.side === 'bid' ? BID : ASK })),
          },
        ]),
      );
    },
    async landedDigest(exchange, ticker, at) {
      // On a venue's clock both recorders stamp a message alike: the split is by time, no digest needed.
      if (venueClock(exchange)) return undefined;
      const landed = await store.landedBook(exchange, ticker, at);
      if (landed === undefined) return undefined;
      const book = new LocalBook();
      const code = (side: 'bid' | 'ask') => (side === 'bid' ? BID : ASK);
      for (const l of landed.levels) book.setLevel(code(l.side), l.price, l.quantity);
      for (const d of landed.deltas) {
        // A landed series that does not add up is no book to match: the split falls back to time.
        if (!book.addToLevel(code(d.side), d.price, d.quantityDelta, formatDecimal)) return undefined;
      }
      return bookDigest(book);
    },
    killWriter: (term) => store.killWriter(term),
    insertHandovers: (rows) =>
      store.insertHandovers(
        rows.map((r) => ({
          exchange: r.exchange,
          ticker: r.ticker,
          ts: r.ts,
          from_term: r.fromTerm,
          to_term: r.toTerm,
          kind: r.kind,
          detected_at: r.detectedAt,
        })),
      ),
    handoversOf: async (term) => (await store.handoversOf(term)).map(fromStored),
  };
}

export interface RedundancyDeps {
  config: RecorderConfig;
  logger: Logger;
  registry?: Registry;
  store: RecorderStore;
  now: () => number;
  /** The recorder must stop and start again (the lease is lost). */
  onFatal: (reason: string) => void;
}

/** The parts the recorder wires in (redundant mode). */
export interface Redundancy {
  readonly term: number;
  readonly lease: Lease;
  readonly buffer: StandbyBuffer;
  /** Writer options: the lease's gate and the spool's fence. */
  writerOptions(): { term: number; gate: () => boolean; fence: (term: number) => Promise<Fence | undefined> };
  /** Binds the writer, its sink and the venues, and builds the controller. */
  bind(parts: { writer: ControlWriter; sink: RowSink; venues: ReadonlyMap<ExchangeKey, Venue> }): {
    routing: RoutingSink;
    controller: Controller;
  };
  readonly controller: Controller | undefined;
  /** The RowSink the venues' tickers write to. */
  readonly routing: RoutingSink | undefined;
  /** The ticker lost its book (TickerEnv.onLost): its rows go to the buffer at once; a peer is asked to take it. */
  onLost(rec: TickerRecorder, fromTs: number, reason: string): void;
  /** Folds buffered rows older than the window (the recorder's sweep). */
  sweep(now: number): void;
  /** After the recorder's stop: the lease and the Redis connection go. */
  close(): Promise<void>;
}

export async function startRedundancy(deps: RedundancyDeps): Promise<Redundancy | undefined> {
  const { config, logger } = deps;
  const target = recorderRedisTarget(config);
  if (target === undefined) return undefined;
  const log = logger.child({ component: 'redundancy' });
  const redis: Redis = createRedisClient(target, {
    name: `recorder:${config.RECORDER_ID}`,
    logger: log,
    commandTimeoutMs: Math.max(500, Math.floor(config.RECORDER_LEASE_TTL_MS / 5)),
  });
  await waitForRedis(redis, config.CLICKHOUSE_STARTUP_TIMEOUT_MS);
  const lease = await Lease.acquire({
    redis,
    prefix: config.RECORDER_REDIS_PREFIX,
    id: config.RECORDER_ID,
    ttlMs: config.RECORDER_LEASE_TTL_MS,
    logger: log,
  });
  log.info({ term: lease.term, id: config.RECORDER_ID }, 'redundant recording: lease taken');
  const ownership = new RedisOwnership(redis, config.RECORDER_REDIS_PREFIX);
  let controller: Controller | undefined;
  let routing: RoutingSink | undefined;
  let venues: ReadonlyMap<ExchangeKey, Venue> = new Map();
  const buffer = new StandbyBuffer(deps.now, { venueClock: (e) => venues.get(e)?.venueClock ?? true });
  const rec = (exchange: ExchangeKey, ticker: string) => venues.get(exchange)?.recorders.get(ticker);

  return {
    term: lease.term,
    lease,
    buffer,
    get controller() {
      return controller;
    },
    get routing() {
      return routing;
    },
    writerOptions: () => ({
      term: lease.term,
      gate: () => lease.canInsert(),
      fence: async (term: number) => {
        if (controller === undefined) throw new Error('the spool replays before the controller exists');
        return fenceOfHandovers(term, await controller.resolveTerm(term));
      },
    }),
    bind(parts) {
      // The venues are created after the bind (they need the routing sink); the map fills then.
      venues = parts.venues;
      routing = new RoutingSink(parts.sink, buffer);
      const r = routing;
      controller = new Controller({
        lease,
        ownership,
        store: controlStore(deps.store, (e) => venues.get(e)?.venueClock ?? true),
        writer: parts.writer,
        buffer: {
          splice: (exchange, ticker, point) => {
            // Through the routing sink, the ticker owned first: its end counts the spliced rows.
            r.setOwned(exchange, ticker, true);
            const held = buffer.of(exchange, ticker);
            const result = held.splice(point, r, deps.now());
            log.debug(
              { exchange, ticker, s: point.s, lastTradeTs: point.lastTradeTs, ...result },
              'spliced a ticker taken over',
            );
            buffer.drop(exchange, ticker);
            return result;
          },
        },
        routing: {
          setOwner: (exchange, ticker, owned) => r.setOwned(exchange, ticker, owned),
          endOf: (exchange, ticker) => r.endOf(exchange, ticker),
          forget: (exchange, ticker) => r.forget(exchange, ticker),
        },
        tickers: {
          live: (exchange, ticker) => rec(exchange, ticker)?.live ?? false,
          bookDigest: (exchange, ticker) => {
            const t = rec(exchange, ticker);
            return t?.live === true ? bookDigest(t.book) : undefined;
          },
          resumeSequence: (exchange, ticker, sequence, s, pendingGap) => {
            const t = rec(exchange, ticker);
            if (t === undefined) return;
            // The buffer held no book at S although the ticker's is live: the ticker resyncs (its gap starts at S at
            // the earliest: resumeSequence moves it there).
            if (pendingGap !== undefined && t.live) venues.get(exchange)?.resyncTicker(t, 'handover');
            t.resumeSequence(sequence, s);
          },
          writeOwnGap: (exchange, ticker) => {
            const back = r.handBack(exchange, ticker, deps.now());
            const t = rec(exchange, ticker);
            // Rows of the offer's wait were folded out of the buffer: the ticker resyncs (its own gap).
            if (back.pendingGap !== undefined && t !== undefined) venues.get(exchange)?.resyncTicker(t, 'handover');
          },
        },
        sink: parts.sink,
        exchanges: config.exchanges,
        ttlMs: config.RECORDER_LEASE_TTL_MS,
        offerTimeoutMs: config.RECORDER_OFFER_TIMEOUT_MS,
        writeFailureMs: config.RECORDER_HANDOVER_ON_WRITE_FAILURE_MS,
        registry: deps.registry,
        logger: log,
        onFatal: deps.onFatal,
      });
      return { routing, controller };
    },
    onLost(t, fromTs, reason) {
      if (controller === undefined || routing === undefined) return;
      // Synchronously: the loss's gap and the snapshot closing it must not reach the writer before the answer.
      if (controller.role(t.exchange, t.ticker) === 'owner') routing.setOwned(t.exchange, t.ticker, false);
      void controller.onLost(t.exchange, t.ticker, fromTs, reason);
    },
    sweep(now) {
      buffer.trim(now - config.RECORDER_STANDBY_BUFFER_MS);
    },
    async close() {
      await controller?.stop().catch((err: Error) => log.warn({ err: { message: err.message } }, 'controller stop'));
      redis.disconnect();
    },
  };
}
