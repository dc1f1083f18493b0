import { AppError } from '@depthgate/service-kit';
import { replay } from '../../engine';
import { GeminiClient } from '../../testing/clients';
import { directBook, randomWindow } from '../../testing/history';
import { VENUES } from '../../testing/venues';
import type { Frame } from '../protocol';
import { geminiSocket } from './gemini';

const gemini = VENUES.find((v) => v.exchange === 'venue_c');
const grid = gemini?.grid as NonNullable<typeof gemini>['grid'];
const subscribe = (...symbols: unknown[]) =>
  JSON.stringify({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols }] });
const replies = (f: Frame) => (f.kind === 'reply' ? f.texts.map((t) => JSON.parse(t) as unknown) : f);
const error = (reason: string, message: unknown = expect.any(String)) => ({
  type: 'error',
  result: 'error',
  reason,
  message,
});

describe('Gemini replay protocol (market data v2)', () => {
  it('a subscribe names its symbols (several subscriptions add up, each once); Gemini acks nothing', () => {
    const p = geminiSocket.create();
    const f = p.frame(
      JSON.stringify({
        type: 'subscribe',
        subscriptions: [
          { name: 'l2', symbols: ['BTCUSD', 'ethusd'] },
          { name: 'l2', symbols: ['BTCUSD'] },
        ],
      }),
      false,
      false,
    );
    expect(f).toEqual({ kind: 'subscribe', request: { tickers: ['BTCUSD', 'ethusd'], detail: undefined } });
    if (f.kind !== 'subscribe') throw new Error('unreachable');
    expect(p.accept(f.request, ['BTCUSD', 'ETHUSD'])).toEqual([]);
    // A second subscribe before the start adds its symbols; one named again is not replayed twice.
    const g = p.frame(subscribe('SOLUSD', 'BTCUSD'), false, false);
    if (g.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(g.request, ['SOLUSD', 'BTCUSD']);
    expect(p.streams().map((s) => s.ticker)).toEqual(['BTCUSD', 'ETHUSD', 'SOLUSD']);
  });

  it('bad frames get Gemini’s error form (InvalidJson) and name nothing', () => {
    const p = geminiSocket.create();
    const cases: [string, boolean][] = [
      ['not json', false],
      ['[1,2]', false],
      ['null', false],
      [JSON.stringify({ type: 'hello' }), false],
      [JSON.stringify({ type: 'subscribe' }), false],
      [JSON.stringify({ type: 'subscribe', subscriptions: {} }), false],
      [JSON.stringify({ type: 'subscribe', subscriptions: [{ name: 'candles_1m', symbols: ['BTCUSD'] }] }), false],
      [JSON.stringify({ type: 'subscribe', subscriptions: [{ name: 'l2' }] }), false],
      [JSON.stringify({ type: 'subscribe', subscriptions: [null] }), false],
      [subscribe(), false],
      [JSON.stringify({ type: 'subscribe', subscriptions: [] }), false],
      ['\u0000\u0001', true],
    ];
    for (const [text, binary] of cases) expect(replies(p.frame(text, binary, false))).toEqual([error('InvalidJson')]);
    expect(p.streams()).toEqual([]);
  });

  it('an unknown symbol is InvalidSymbol (as the simulator writes it), the others go on; a window before the key’s is InvalidTimestamp', () => {
    const p = geminiSocket.create();
    const f = p.frame(subscribe('BTCUSD', 'NOPEUSD', 7), false, false);
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    // A symbol that is not a string goes to the socket as its text (never recorded: refused the same way).
    expect(f.request.tickers).toEqual(['BTCUSD', 'NOPEUSD', '7']);
    expect(p.refuse(f.request, 'NOPEUSD', new AppError('unknown_ticker', 'Unknown ticker'))).toEqual({
      reject: false,
      texts: [JSON.stringify(error('InvalidSymbol', 'invalid symbol NOPEUSD'))],
    });
    const early = new AppError('invalid_timestamp', 'from … is before the start of your window for BTCUSD, 2026-03-19');
    const r = p.refuse(f.request, 'BTCUSD', early);
    expect(r.reject).toBe(false);
    expect(r.texts.map((t) => JSON.parse(t) as unknown)).toEqual([error('InvalidTimestamp', early.message)]);
    p.accept(f.request, []);
    expect(p.streams()).toEqual([]);
  });

  it('a subscribe after the start is ReplayStarted; an unsubscribe before it removes the symbol, after it stops its messages', () => {
    const p = geminiSocket.create();
    const f = p.frame(subscribe('AUSD', 'BUSD', 'CUSD'), false, false);
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(f.request, ['AUSD', 'BUSD', 'CUSD']);
    const unsubscribe = (s: string) =>
      JSON.stringify({ type: 'unsubscribe', subscriptions: [{ name: 'l2', symbols: [s] }] });
    expect(p.frame(unsubscribe('cusd'), false, false)).toEqual({ kind: 'reply', texts: [] });
    const streams = p.streams();
    expect(streams.map((s) => s.ticker)).toEqual(['AUSD', 'BUSD']);
    expect(replies(p.frame(subscribe('DUSD'), false, true))).toEqual([error('ReplayStarted')]);
    expect(replies(p.frame(subscribe('AUSD'), false, true))).toEqual([error('ReplayStarted')]);
    const w = randomWindow('gemini-unsubscribe', grid, { events: 40, gapRate: 0 });
    const [a, b] = streams.map((s) => replay(w, s.encoder));
    expect((a as Iterator<unknown>).next().done).toBe(false);
    expect((b as Iterator<unknown>).next().done).toBe(false);
    expect(p.frame(unsubscribe('BUSD'), false, true)).toEqual({ kind: 'reply', texts: [] });
    expect([...(b as Iterable<unknown>)]).toEqual([]);
    expect([...(a as Iterable<unknown>)].length).toBeGreaterThan(0);
  });

  it('a symbol’s stream is the engine’s Gemini messages: the whole book first, a gap’s reset in the first-message form', () => {
    const p = geminiSocket.create();
    const f = p.frame(subscribe('BTCUSD'), false, false);
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    p.accept(f.request, ['BTCUSD']);
    const [stream] = p.streams();
    const w = randomWindow('gemini-stream', grid, { events: 300, gapRate: 0.05 });
    const texts = [...replay(w, stream?.encoder as never)].map((m) => m.text);
    const client = new GeminiClient();
    for (const t of texts) client.consume(t);
    expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
    expect(JSON.parse(texts[0] as string)).toMatchObject({ type: 'l2_updates', symbol: 'BTCUSD', trades: [] });
    const wholeBooks = texts.filter((t) => client.isWholeBook(t)).length;
    expect(wholeBooks).toBe(1 + w.gaps.filter((g) => g.book).length);
    expect(w.gaps.length).toBeGreaterThan(0);
  });
});
