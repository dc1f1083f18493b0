/**
 * The ClickHouse layer shared by the history service, its CLIs and the recorder: client factory, the literal
 * helper, migrations, queries, and streaming inserts. See docs/history.md for the schema and the row formats.
 */
export * from './client';
export * from './errors';
export * from './inserts';
export * from './literals';
export * from './migrations';
export * from './queries';
export * from './schema';
export * from './startup';
