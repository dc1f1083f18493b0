/**
 * One Kalshi replay socket (`/ws/replay/v1/venue-b`): the client talks to it as to Kalshi's WebSocket.
 *
 * - It sends Kalshi's `subscribe` (`{"id":1,"cmd":"subscribe","params":{"channels":["orderbook_delta","trade"],
 *   "market_ticker":"…"}}`, or `market_tickers`); the answer is one `subscribed` per channel, with its `sid` (1, 2, …
 *   in the order the channels were named), as Kalshi answers. One subscription per socket: the replay starts with it.
 * - Then, paced by the recorded clock at the socket's `speed`: each market's book at `from` (`orderbook_snapshot`),
 *   every recorded change (`orderbook_delta`, `seq` contiguous per `sid` across the markets) and trade (`trade`) of
 *   (`from`, `to`], a recorded gap as a fresh `orderbook_snapshot` at the next `seq` (README.md, "Per venue"); only the
 *   channels subscribed.
 * - The end of the window closes the socket with 1000 "replay finished" (as tardis-machine's "WS replay finished").
 *
 * Bad commands get Kalshi's error form (`{"id","type":"error","msg":{"code","msg"}}`, protocols.md §1.6): 1 not JSON
 * or not a command, 2 no params, 3 no channels, 8 a channel other than orderbook_delta and trade, 14 no market,
 * 16 a market never recorded (or outside the key's ticker_prefixes), 11 a window before the start of the caller's
 * window for a market, 5 an unknown command, 13 a command the replay does not support (update_subscription,
 * unsubscribe, list_subscriptions) or a second subscribe; the socket stays open for a valid subscribe. A failure
 * reading the window closes it with 1011 (or 1008 for a window over the row bound) and the reason.
 */
import type { Caller } from '@depthgate/auth';
import { kalshiWire } from '@depthgate/feeds';
import type { HistoryStore, OrderBookQueries, QueryScope } from '@depthgate/history-store';
import { AppError, type Logger } from '@depthgate/service-kit';
import type { WebSocket } from 'ws';
import { kalshiEncoder, mergeByClock, paced, replay, type KalshiSubscription, type NativeMessage } from '../engine';
import type { ReplayMetrics } from '../metrics';
import { checkWindowStart, visibleTicker } from '../request';
import { readWindow, WindowTooLargeError } from '../source';

export const CLOSE_FINISHED = { code: 1000, reason: 'replay finished' } as const;

const CHANNELS = new Set(['orderbook_delta', 'trade']);
const UNSUPPORTED = new Set(['update_subscription', 'unsubscribe', 'list_subscriptions']);
/** Above this many unsent bytes the replay waits for the socket before sending more. */
const HIGH_WATER_BYTES = 1024 * 1024;

export interface KalshiReplayDeps {
  ws: WebSocket;
  caller: Caller;
  from: number;
  to: number;
  speed: number | 'max';
  store: HistoryStore;
  queries: OrderBookQueries;
  metrics: ReplayMetrics;
  logger: Logger;
  queryTimeoutMs: number;
  maxWindowRows: number;
  now: () => number;
}

class CommandError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class KalshiReplay {
  private state: 'waiting' | 'resolving' | 'running' | 'done' = 'waiting';
  private scope: QueryScope | undefined;
  /** Ends the pacing's current wait (the client went away: nothing is left to wait for). */
  private wake: (() => void) | undefined;

  constructor(private readonly d: KalshiReplayDeps) {
    d.ws.on('message', (data, isBinary) => {
      if (isBinary) return this.reply(kalshiWire.error(null, 1, 'Unable to process message'));
      void this.command(String(data));
    });
    d.ws.on('close', () => {
      this.state = 'done';
      this.scope?.abort('cancelled');
      this.wake?.();
    });
  }

  private reply(text: string): void {
    if (this.d.ws.readyState === this.d.ws.OPEN) this.d.ws.send(text);
  }

  private async command(text: string): Promise<void> {
    let id: unknown = null;
    try {
      let m: unknown;
      try {
        m = JSON.parse(text);
      } catch {
        throw new CommandError(1, 'Unable to process message');
      }
      if (m === null || typeof m !== 'object' || Array.isArray(m))
        throw new CommandError(1, 'Unable to process message');
      const cmd = (m as { cmd?: unknown }).cmd;
      id = (m as { id?: unknown }).id ?? null;
      if (cmd === 'subscribe') return await this.subscribe(id, (m as { params?: unknown }).params);
      if (typeof cmd === 'string' && UNSUPPORTED.has(cmd))
        throw new CommandError(13, `Unsupported action: the replay answers subscribe only (${cmd})`);
      throw new CommandError(5, 'Unknown command');
    } catch (err) {
      if (err instanceof CommandError) return this.reply(kalshiWire.error(id, err.code, err.message));
      this.d.logger.error({ err: { message: (err as Error).message } }, 'replay command failed');
      this.reply(kalshiWire.error(id, 17, 'Internal error'));
    }
  }

  private async subscribe(id: unknown, params: unknown): Promise<void> {
    if (this.state !== 'waiting')
      throw new CommandError(13, 'Unsupported action: one subscription per replay socket, before the replay starts');
    if (params === null || typeof params !== 'object') throw new CommandError(2, 'Params required');
    const p = params as { channels?: unknown; market_ticker?: unknown; market_tickers?: unknown };
    if (!Array.isArray(p.channels) || p.channels.length === 0) throw new CommandError(3, 'Channels required');
    const channels = [...new Set(p.channels as unknown[])];
    for (const c of channels)
      if (typeof c !== 'string' || !CHANNELS.has(c))
        throw new CommandError(8, `Unknown channel name: the replay serves orderbook_delta and trade`);
    const tickers = [
      ...new Set([
        ...(typeof p.market_ticker === 'string' ? [p.market_ticker] : []),
        ...(Array.isArray(p.market_tickers) ? (p.market_tickers as unknown[]) : []),
      ]),
    ];
    if (tickers.length === 0 || tickers.some((t) => typeof t !== 'string'))
      throw new CommandError(14, 'Market Ticker required');
    this.state = 'resolving';
    const scope = this.d.store.scope(this.d.queryTimeoutMs);
    this.scope = scope;
    const resolved: string[] = [];
    try {
      for (const requested of tickers as string[]) {
        try {
          const ticker = await visibleTicker(this.d.queries, scope, this.d.caller, 'venue_b', requested);
          checkWindowStart(this.d.caller, ticker, this.d.from, this.d.now());
          resolved.push(ticker);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          throw new CommandError(
            err.code === 'unknown_ticker' ? 16 : 11,
            err.code === 'unknown_ticker' ? `Market not found: ${requested.slice(0, 80)}` : err.message,
          );
        }
      }
    } catch (err) {
      scope.dispose();
      if ((this.state as string) !== 'done') this.state = 'waiting';
      throw err;
    }
    this.state = 'running';
    // One sid per channel, in the order named, as Kalshi numbers a connection's subscriptions.
    const sids = new Map(channels.map((c, i) => [c as string, i + 1]));
    for (const [channel, sid] of sids) this.reply(kalshiWire.subscribed(id, channel, sid));
    void this.run(scope, resolved, sids);
  }

  private async run(scope: QueryScope, tickers: string[], sids: Map<string, number>): Promise<void> {
    const { ws } = this.d;
    const bookSid = sids.get('orderbook_delta');
    const tradeSid = sids.get('trade');
    try {
      const windows = [];
      for (const ticker of tickers)
        windows.push(
          await readWindow(this.d.queries, scope, {
            exchange: 'venue_b',
            ticker,
            from: this.d.from,
            to: this.d.to,
            maxRows: this.d.maxWindowRows,
          }),
        );
      scope.dispose();
      // The book subscription's seq is shared by its markets (taken as each message is sent).
      const book: KalshiSubscription = { sid: bookSid ?? 0, seq: 0 };
      const replays: Iterator<NativeMessage>[] = windows.map((w) =>
        replay(w, kalshiEncoder({ ticker: w.ticker, book, tradeSid: tradeSid ?? 0 })),
      );
      const messages = paced(mergeByClock(replays, 'ts'), {
        speed: this.d.speed,
        from: this.d.from,
        now: Date.now,
        sleep: (ms) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          }),
      });
      let sent = 0;
      for await (const m of messages) {
        if (this.state === 'done') {
          this.d.metrics.replays.inc({ exchange: 'venue_b', outcome: 'cancelled' });
          return;
        }
        const text = m.message.text;
        const isTrade = text.startsWith('{"type":"trade"');
        if (isTrade ? tradeSid === undefined : bookSid === undefined) continue;
        if (ws.bufferedAmount > HIGH_WATER_BYTES) await new Promise<void>((r) => ws.send(text, () => r()));
        else ws.send(text);
        sent++;
      }
      this.d.metrics.messages.inc({ exchange: 'venue_b' }, sent);
      this.state = 'done';
      this.d.metrics.replays.inc({ exchange: 'venue_b', outcome: 'complete' });
      ws.close(CLOSE_FINISHED.code, CLOSE_FINISHED.reason);
    } catch (err) {
      scope.dispose();
      if (this.state === 'done') {
        this.d.metrics.replays.inc({ exchange: 'venue_b', outcome: 'cancelled' });
        return;
      }
      this.state = 'done';
      this.d.metrics.replays.inc({ exchange: 'venue_b', outcome: 'cut' });
      if (err instanceof WindowTooLargeError) {
        ws.close(1008, `window over ${err.maxRows} recorded rows: replay shorter windows`);
        return;
      }
      this.d.logger.warn({ err: { message: (err as Error).message } }, 'WebSocket replay failed');
      ws.close(1011, scope.reason === 'timeout' ? 'reading the window ran over its time budget' : 'replay failed');
    }
  }
}
