// The key check alone: `apiKeyAuth`'s middleware on a cached valid key (the gateway's steady state), one build against
// another in the same process, in alternating rounds, CPU time per call. What a change to the key check costs, told
// apart from everything else the gateway A/B measures.
//
//   node bench/gateway/key-check.mjs ROOT_A ROOT_B [calls per round]
//
// ROOT_A / ROOT_B: built checkouts (the repository's root). A build from before `apiKeyAuth` took the trusted proxy
// hops (200957a and older) is called the old way.
import { createRequire } from 'node:module';

const [rootA, rootB, callsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error('usage: node bench/gateway/key-check.mjs ROOT_A ROOT_B [calls per round]');
  process.exit(2);
}
const CALLS = Number(callsArg ?? 1_000_000);
const ROUNDS = 12;

function variant(root) {
  const auth = createRequire(`${root}/packages/auth/package.json`)(`${root}/packages/auth/dist/index.js`);
  const key = auth.generateApiKey();
  const record = {
    id: 'key_0000000000000000',
    name: 'bench',
    created_at: new Date(0).toISOString(),
    revoked_at: null,
    ticker_prefixes: null,
    max_data_age_days: null,
    full_history_prefixes: null,
    requests_per_minute: null,
    platforms: null,
    key_hash: auth.hashApiKey(key),
  };
  const withAddress = typeof auth.RefusedKeys === 'function';
  const authenticator = new auth.Authenticator({
    store: { findByHash: async () => record, eventsChannel: 'bench' },
    cacheTtlMs: 3_600_000,
    maxStaleMs: 3_600_000,
    maxEntries: 1000,
    ...(withAddress ? { refusedKeys: new auth.RefusedKeys(30) } : {}),
  });
  const middleware = withAddress
    ? auth.apiKeyAuth(authenticator, 'required', 0)
    : auth.apiKeyAuth(authenticator, 'required');
  return {
    authenticator,
    middleware,
    key,
    req: { headers: { 'x-api-key': key }, socket: { remoteAddress: '127.0.0.1' } },
  };
}

const variants = [
  ['A', variant(rootA)],
  ['B', variant(rootB)],
];
for (const [, v] of variants) await v.authenticator.verify(v.key); // cached from here on
let passed = 0;
const next = () => {
  passed++;
};
const ns = { A: [], B: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, v] of round % 2 === 0 ? variants : [...variants].reverse()) {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) v.middleware(v.req, {}, next);
    const used = process.cpuUsage(start);
    ns[name].push(((used.user + used.system) * 1000) / CALLS);
  }
}
if (passed !== ROUNDS * 2 * CALLS) throw new Error(`the key was refused (${passed} of ${ROUNDS * 2 * CALLS} passed)`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const a = median(ns.A);
const b = median(ns.B);
console.log(
  `apiKeyAuth on a cached valid key, CPU ns per call (median of ${ROUNDS} alternating rounds of ${CALLS}): ` +
    `A ${a.toFixed(0)} (${rootA}), B ${b.toFixed(0)} (${rootB}), B/A ${(b / a).toFixed(2)}`,
);
