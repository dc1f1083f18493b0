import { fenceOf, fenceRows, lastLineOfEachTicker, type HandoverCut } from './spool-fence';

/** KX was handed over at 1000; KY was not. */
const cut: HandoverCut = (exchange, ticker) => (exchange === 'venue_b' && ticker === 'KX' ? 1000 : undefined);

describe('fenceRows', () => {
  it('drops the rows of a handed-over ticker from its hand-over point on, and keeps every other row', () => {
    const text = [
      'venue_b\tKX\t999\t999000\tbid\t0.5\t1\t999\tS1:1',
      'venue_b\tKX\t1000\t1000000\tbid\t0.5\t1\t1000\tS1:2',
      'venue_b\tKY\t1000\t1000000\task\t0.6\t-1\t1000\tS2:5',
      'venue_b\tKX\t1001\t1001000\tbid\t0.5\t-2\t1001\tS1:3',
      'venue_c\tKX\t1500\t1500000\tbid\t1\t1\t1500\t',
      '',
    ].join('\n');
    const r = fenceRows('deltas', text, cut);
    expect(
      r.text
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').slice(0, 3).join(' ')),
    ).toEqual(['venue_b KX 999', 'venue_b KY 1000', 'venue_c KX 1500']);
    expect([r.rows, r.dropped, r.clipped]).toEqual([3, 2, 0]);
    expect(r.last?.slice(0, 3)).toEqual(['venue_c', 'KX', '1500']);
    expect(r.text.endsWith('\n')).toBe(true);
  });

  it('ends a gap that reaches past the hand-over point there, and drops one that starts after it', () => {
    const text = [
      'venue_b\tKX\t900\t1200\tdisconnect\t1250\tbook',
      'venue_b\tKX\t1000\t1100\tstall\t1150\tbook',
      'venue_b\tKX\t800\t950\tstall\t960\tbook',
      'venue_b\tKY\t900\t1200\tdisconnect\t1250\tbook',
    ].join('\n');
    const r = fenceRows('gaps', text, cut);
    expect(r.text).toBe(
      [
        'venue_b\tKX\t900\t1000\tdisconnect\t1250\tbook',
        'venue_b\tKX\t800\t950\tstall\t960\tbook',
        'venue_b\tKY\t900\t1200\tdisconnect\t1250\tbook',
        '',
      ].join('\n'),
    );
    expect([r.rows, r.dropped, r.clipped]).toEqual([3, 1, 1]);
  });

  it('keeps trades whatever their time (they are read once by id), and says when nothing is left', () => {
    const trade = 'venue_b\tKX\t5000\t5000000\tT-1\t0.5\t1\tbuy\tyes\t5000\t';
    expect(fenceRows('trades', `${trade}\n`, cut)).toMatchObject({ rows: 1, dropped: 0, text: `${trade}\n` });
    const snapshot = 'venue_b\tKX\t2000\tbid\t0.5\t3\t2000\t\nvenue_b\tKX\t2000\task\t0.6\t1\t2000\t\n';
    expect(fenceRows('snapshots', snapshot, cut)).toEqual({
      text: '',
      rows: 0,
      dropped: 2,
      clipped: 0,
      stored: 0,
      last: undefined,
    });
  });

  it('leaves out whole the tickers already stored, and finds the last line of each ticker', () => {
    const text = ['venue_b\tKX\t998\t1', 'venue_b\tKY\t997\t2', 'venue_b\tKX\t999\t3', 'venue_b\tKY\t1500\t4']
      .map((l) => `${l}\t\n`)
      .join('');
    const cut = fenceOf(new Map([['venue_b\tKY', [{ from: 1000, until: Infinity }]]]));
    expect([...lastLineOfEachTicker(text)].map(([k, f]) => [k, f[2]])).toEqual([
      ['venue_b\tKX', '999'],
      ['venue_b\tKY', '1500'],
    ]);
    expect(fenceRows('deltas', text, cut, new Set(['venue_b\tKX']))).toMatchObject({
      text: 'venue_b\tKY\t997\t2\t\n',
      rows: 1,
      dropped: 1,
      stored: 2,
    });
  });
});

describe('fenceRows with intervals', () => {
  /** KX was another term's in [1000, 2000) and from 3000 on. */
  const fence = fenceOf(
    new Map([
      [
        'venue_b\tKX',
        [
          { from: 3000, until: Infinity },
          { from: 1000, until: 2000 },
        ],
      ],
    ]),
  );

  it('drops the rows inside any interval and keeps those between them', () => {
    const text = [999, 1000, 1999, 2000, 2999, 3000, 9000]
      .map((ts) => `venue_b\tKX\t${ts}\t${ts}000\tbid\t0.5\t1\t${ts}\t`)
      .join('\n');
    const r = fenceRows('deltas', text, fence);
    expect(
      r.text
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[2]),
    ).toEqual(['999', '2000', '2999']);
    expect([r.rows, r.dropped]).toEqual([3, 4]);
    expect(r.last?.[2]).toBe('2999');
  });

  it('clips a gap at the start of the next interval, drops one starting inside, keeps one between', () => {
    const text = [
      'venue_b\tKX\t500\t1500\tdisconnect\t1600\tbook',
      'venue_b\tKX\t1500\t2500\tstall\t2600\tbook',
      'venue_b\tKX\t2100\t2500\tstall\t2600\tbook',
      'venue_b\tKX\t2500\t4000\tstall\t4100\tbook',
    ].join('\n');
    const r = fenceRows('gaps', text, fence);
    expect(r.text).toBe(
      [
        'venue_b\tKX\t500\t1000\tdisconnect\t1600\tbook',
        'venue_b\tKX\t2100\t2500\tstall\t2600\tbook',
        'venue_b\tKX\t2500\t3000\tstall\t4100\tbook',
        '',
      ].join('\n'),
    );
    expect([r.rows, r.dropped, r.clipped]).toEqual([3, 1, 2]);
  });

  it('keeps trades inside an interval', () => {
    const trade = 'venue_b\tKX\t1500\t1500000\tT-9\t0.5\t1\tbuy\tyes\t1500\t\n';
    expect(fenceRows('trades', trade, fence)).toMatchObject({ rows: 1, dropped: 0 });
  });
});
