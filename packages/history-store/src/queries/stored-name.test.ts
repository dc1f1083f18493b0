import { storedTickerName } from './order-books';

describe('storedTickerName', () => {
  const spans = (...names: string[]) => names.map((ticker) => ({ ticker }));
  it('the ticker itself when stored so, even beside other spellings', () => {
    expect(storedTickerName(spans('BTCUSD', 'btcusd', 'BTCUSD'), 'btcusd')).toBe('btcusd');
  });
  it('else the one stored ticker equal to it ignoring case', () => {
    expect(storedTickerName(spans('BTCUSD', 'BTCUSD'), 'btcUSD')).toBe('BTCUSD');
  });
  it('none when nothing matches, or several spellings do', () => {
    expect(storedTickerName([], 'X')).toBeUndefined();
    expect(storedTickerName(spans('BtcUsd', 'BTCUSD'), 'btcusd')).toBeUndefined();
  });
});
