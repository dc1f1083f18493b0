import { csvHeader, FIELD_RECEIVED, FIELD_SEQUENCE, FIELD_VENUE_SIDE } from '../order-books/row-binary';
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

describe('the CSV columns of trades', () => {
  it.each([
    [0, []],
    [FIELD_RECEIVED, ['received_ts']],
    [FIELD_VENUE_SIDE | FIELD_SEQUENCE, ['venue_side', 'sequence']],
    [FIELD_RECEIVED | FIELD_VENUE_SIDE | FIELD_SEQUENCE, ['received_ts', 'venue_side', 'sequence']],
  ] as const)('with fields %i are the trade row schema’s fields in order', (fields, names) => {
    expect(csvHeader('trade', fields)).toBe(`${csvColumns('trade', names).join(',')}\n`);
  });
});
