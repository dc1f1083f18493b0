// The tables are exhaustive: every method of each library is called, or named with the reason it is not; and every
// method a table names exists, with a declared type the declarations resolve.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClobClient } from '@polymarket/clob-client';
import ccxt from 'ccxt';
import * as kalshi from 'kalshi-typescript';
import { PolymarketUS } from 'polymarket-us';
import { DeclaredTypes } from './declared-types.ts';
import type { LibrarySpec } from './harness.ts';
import { LIBRARIES } from './libraries/index.ts';
import { KALSHI_API_CLASSES } from './libraries/kalshi-typescript.ts';

const methodsOf = (prototype: object, prefix = '') =>
  Object.getOwnPropertyNames(prototype)
    .filter((n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(prototype, n)?.value === 'function')
    .map((n) => `${prefix}${n}`);

/** Each library's surface, as the library itself exposes it at run time. */
function surface(label: string): string[] {
  switch (label) {
    case 'kalshi-typescript':
      return Object.entries(KALSHI_API_CLASSES).flatMap(([name, Api]) => methodsOf(Api.prototype, `${name}.`));
    case '@polymarket/clob-client': {
      const client = new ClobClient('http://127.0.0.1:9', 137);
      return [...methodsOf(ClobClient.prototype), ...methodsOf(Object.getPrototypeOf(client.rfq) as object, 'rfq.')];
    }
    case 'polymarket-us': {
      const client = new PolymarketUS({}) as unknown as Record<string, unknown>;
      return Object.entries(client)
        .filter(([, v]) => v !== null && typeof v === 'object' && !(v instanceof Array))
        .flatMap(([name, resource]) => methodsOf(Object.getPrototypeOf(resource) as object, `${name}.`));
    }
    default: {
      // ccxt: what the class says it can fetch (`has`), and loadMarkets.
      const classes: Record<string, new () => { has: Record<string, unknown> }> = {
        'ccxt coinbaseexchange': ccxt.coinbaseexchange,
        'ccxt gemini': ccxt.gemini,
        'ccxt prediction.kalshi': ccxt.prediction.kalshi,
        'ccxt prediction.polymarket': ccxt.prediction.polymarket,
      };
      const Exchange = classes[label];
      if (!Exchange) throw new Error(`no surface for ${label}`);
      const has = Object.entries(new Exchange().has).filter(([k, v]) => v && k.startsWith('fetch'));
      return ['loadMarkets', ...has.map(([k]) => k)];
    }
  }
}

const listed = (lib: LibrarySpec<unknown>) => [...lib.methods.map((m) => m.name), ...Object.keys(lib.notCalled)];

describe('the contract tables', () => {
  for (const lib of LIBRARIES) {
    it(`${lib.label}: every method is called or named with a reason, and every named method exists`, () => {
      const exposed = surface(lib.label).sort();
      assert.deepEqual([...listed(lib)].sort(), exposed);
      assert.equal(new Set(lib.methods.map((m) => m.name)).size, lib.methods.length, 'a method is listed twice');
      for (const [method, reason] of Object.entries(lib.notCalled)) assert.ok(reason.length > 10, method);
    });
  }

  it('kalshi-typescript: the tables cover all of its API classes', () => {
    const exported = Object.keys(kalshi).filter(
      (n) => /^[A-Z]\w*Api$/.test(n) && typeof kalshi[n as keyof typeof kalshi] === 'function',
    );
    assert.deepEqual(exported.sort(), Object.keys(KALSHI_API_CLASSES).sort());
  });

  it('kalshi-typescript: the 78 GET operations are called, the 36 that change state are not', () => {
    const kalshi = LIBRARIES.find((l) => l.label === 'kalshi-typescript');
    assert.equal(kalshi?.methods.length, 78);
    assert.equal(Object.keys(kalshi?.notCalled ?? {}).length, 36);
  });

  it('every declared type a table relies on resolves in the library’s declarations', () => {
    const refs = LIBRARIES.flatMap((lib) =>
      lib.methods.map((m) => m.type ?? lib.declared(m.name)).filter((r) => r !== undefined),
    );
    const types = DeclaredTypes.load(refs);
    for (const ref of refs) assert.doesNotThrow(() => types.resolve(ref), `${ref.module} ${ref.path.join('.')}`);
  });
});
