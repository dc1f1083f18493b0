import { filterTickers } from './picker';

describe('ticker search', () => {
  const all = ['BTCUSD', 'ETHBTC', 'ETHUSD', 'KXBTCD-26MAR07', 'XBT'];
  it('prefix matches first, then those containing the text, case-insensitively', () => {
    expect(filterTickers(all, 'btc')).toEqual(['BTCUSD', 'ETHBTC', 'KXBTCD-26MAR07']);
    expect(filterTickers(all, ' eth ')).toEqual(['ETHBTC', 'ETHUSD']);
    expect(filterTickers(all, '')).toEqual(all);
    expect(filterTickers(all, 'zzz')).toEqual([]);
    expect(filterTickers(all, '', 2)).toEqual(['BTCUSD', 'ETHBTC']);
  });
});
