import { DECIMAL as STORED } from '@depthgate/history-store';
import { DECIMAL } from '@depthgate/feeds';

describe('decimal bounds', () => {
  it('the order books parse exactly what the history tables hold (Decimal(38, 18))', () => {
    expect(DECIMAL.source).toBe(STORED.source);
  });
});
