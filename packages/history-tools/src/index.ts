/**
 * @depthgate/history-tools: tools over the order-book history that are not part of any deployable's serving path —
 * the data generator (per-venue book profiles, seeded series of snapshots, deltas and gaps) and the `seed` CLI
 * (`./dev seed`, the first `./dev up --sim`, the benchmarks' data sets). docs/history-internals.md, "Data generator".
 */
export { generateInto, type GenerationPlan, type TickerEnd, type TickerRef } from './generator/generate';
export { formatUnits, generateTickers, profileFor, type BookProfile } from './generator/profiles';
export {
  Progress,
  SEED_END_REASON,
  planGeneration,
  runGeneration,
  tickersFrom,
  type PlanOptions,
  type SeedOptions,
} from './generator/seed';
export {
  TickerSeries,
  expectedRows,
  type GeneratedTrade,
  type SeriesOptions,
  type SeriesSink,
} from './generator/series';
