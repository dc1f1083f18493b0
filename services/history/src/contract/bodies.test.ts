import { csvHeader } from '../order-books/row-binary';
import { csvColumns } from './bodies';

describe('the CSV columns', () => {
  it.each([
    ['snapshot', false],
    ['snapshot', true],
    ['delta', false],
    ['delta', true],
  ] as const)('of %s rows (received_ts: %s) are the row schema’s fields in order', (kind, receivedTs) => {
    expect(csvHeader(kind, receivedTs)).toBe(`${csvColumns(kind, receivedTs).join(',')}\n`);
  });
});
