import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  feedLiveness,
  feedSilenceMs,
  mainFeedHeartbeat,
  PLATFORMS,
  renderSilenceTable,
  SILENCE_MARGIN_MS,
} from './index';

describe('silence thresholds from the descriptors’ heartbeat rhythms', () => {
  it('is the heartbeat interval plus the margin', () => {
    expect(feedSilenceMs({ kind: 'ping-frame', intervalMs: 10_000, source: '' })).toBe(10_500);
    expect(feedSilenceMs({ kind: 'channel', intervalMs: 1_000, source: '' })).toBe(1_500);
    expect(SILENCE_MARGIN_MS).toBe(500);
    // The recorder, whose false alarm is a recorded gap: one whole heartbeat may be missed, plus a second.
    expect(feedSilenceMs({ kind: 'ping-frame', intervalMs: 10_000, source: '' }, 'gap')).toBe(21_000);
    expect(feedSilenceMs({ kind: 'channel', intervalMs: 1_000, source: '' }, 'gap')).toBe(3_000);
  });

  it('refuses an interval that is not a positive integer of milliseconds', () => {
    for (const intervalMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => feedSilenceMs({ kind: 'message', intervalMs, source: '' })).toThrow(/positive integer/);
    }
  });

  it('every platform with a feed states its rhythm, with a source; the thresholds per platform', () => {
    const thresholds: Record<string, number> = {};
    for (const [key, d] of Object.entries(PLATFORMS)) {
      const beat = mainFeedHeartbeat(d);
      expect(beat === undefined).toBe(d.feeds === undefined);
      if (!beat) continue;
      expect(beat.source).toMatch(/\[(V|3P|U)\]/);
      thresholds[key] = feedSilenceMs(beat);
    }
    expect(thresholds).toEqual({
      'venue-a-clob': 10_500,
      'venue-a-us': 10_500,
      'venue-b': 10_500,
      'venue-c': 5_500,
      'venue-d': 1_500,
    });
  });

  it('a consumer’s liveness: the venue’s threshold unless overridden; its keep-alive, at least as often as a venue that only answers pings asks', () => {
    expect(
      feedLiveness(PLATFORMS['venue-b'], { stallMs: undefined, pingMs: 30_000, falseAlarm: 'resubscribe' }),
    ).toEqual({
      heartbeatMs: 10_000,
      stallMs: 10_500,
      pingMs: 30_000,
    });
    expect(feedLiveness(PLATFORMS['venue-b'], { stallMs: undefined, pingMs: 30_000, falseAlarm: 'gap' }).stallMs).toBe(
      21_000,
    );
    expect(feedLiveness(PLATFORMS['venue-d'], { stallMs: 700, pingMs: 150, falseAlarm: 'gap' })).toEqual({
      heartbeatMs: 1_000,
      stallMs: 700,
      pingMs: 150,
    });
    // The CLOB beats only by answering the consumer's PING: pinged less often (or never), the threshold would fire.
    for (const pingMs of [30_000, 0]) {
      expect(
        feedLiveness(PLATFORMS['venue-a-clob'], { stallMs: undefined, pingMs, falseAlarm: 'resubscribe' }).pingMs,
      ).toBe(10_000);
    }
    expect(
      feedLiveness(PLATFORMS['venue-a-clob'], { stallMs: undefined, pingMs: 150, falseAlarm: 'resubscribe' }).pingMs,
    ).toBe(150);
    expect(() => feedLiveness(PLATFORMS['venue-e'], { stallMs: undefined, pingMs: 1, falseAlarm: 'gap' })).toThrow(
      /no feed heartbeat/,
    );
  });

  it('docs/websockets.md shows the table rendered from the descriptors', () => {
    const file = path.resolve(__dirname, '../../../docs/websockets.md');
    const text = readFileSync(file, 'utf8');
    const open = '<!-- silence -->\n';
    const close = '\n<!-- /silence -->';
    const start = text.indexOf(open);
    const end = text.indexOf(close, start);
    expect(start).toBeGreaterThanOrEqual(0);
    const rendered = `${text.slice(0, start + open.length)}${renderSilenceTable(PLATFORMS)}${text.slice(end)}`;
    // Stale: WRITE_DOCS=1 pnpm exec jest --selectProjects unit --testPathPatterns platforms/src/silence rewrites it.
    if (process.env.WRITE_DOCS === '1' && rendered !== text) writeFileSync(file, rendered);
    expect(text).toBe(rendered);
  });
});
