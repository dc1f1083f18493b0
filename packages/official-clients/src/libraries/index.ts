import type { LibrarySpec } from '../harness.ts';
import { CCXT_LIBRARIES } from './ccxt.ts';
import { clobClient } from './clob-client.ts';
import { kalshiTypescript } from './kalshi-typescript.ts';
import { polymarketUs } from './polymarket-us.ts';

/** Every library of the contract suite, in report order. */
export const LIBRARIES: readonly LibrarySpec<unknown>[] = [
  kalshiTypescript,
  clobClient,
  polymarketUs,
  ...CCXT_LIBRARIES,
];
