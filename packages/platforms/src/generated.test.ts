import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EXCHANGES, exchangesOf, renderClientExchanges, renderPythonExchanges, PLATFORMS } from './index';

describe('lists generated from the registry', () => {
  it('the client and the Explorer list every recorded exchange (packages/client/src/exchanges.ts is up to date)', () => {
    const file = path.resolve(__dirname, '../../client/src/exchanges.ts');
    // Stale: run `pnpm run generate` (the build does it too) and commit the file.
    expect(readFileSync(file, 'utf8')).toBe(renderClientExchanges(EXCHANGES));
  });

  it('the Python client lists them too (clients/python/depthgate/exchanges.py is up to date)', () => {
    const file = path.resolve(__dirname, '../../../clients/python/depthgate/exchanges.py');
    // Stale: run `pnpm run generate` (the build does it too) and commit the file.
    expect(readFileSync(file, 'utf8')).toBe(renderPythonExchanges(EXCHANGES));
  });

  it('renders a fixture exchange of another registry into the list with its name and aliases', () => {
    const fixture = {
      ...PLATFORMS,
      'venue-f': {
        ...PLATFORMS['venue-c'],
        key: 'venue-f',
        title: 'Fixture Exchange',
        aliases: ['fixture'],
        exchange: { key: 'venue_f', code: 9, aliases: ['fixture'] },
      },
    };
    const text = renderClientExchanges(exchangesOf(fixture));
    expect(text).toContain(`{ key: 'venue_f', name: 'Fixture Exchange', aliases: ['fixture'] }`);
    expect(text.indexOf('venue_a_us')).toBeLessThan(text.indexOf('venue_f'));
    expect(renderPythonExchanges(exchangesOf(fixture))).toContain(
      `{"key": "venue_f", "name": "Fixture Exchange", "aliases": ("fixture",)},`,
    );
  });
});
