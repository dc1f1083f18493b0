// The layering rules of the house (docs/architecture.md, "Layering rules"), checked by dependency-cruiser in
// `pnpm run lint`. A violation prints `error <rule name>: <from> → <to>` and fails the step. Alone:
// `pnpm run lint:deps`.
//
// Test code is `*.test.ts` (unit, `.int.test.ts`, `.cluster.test.ts`), any `src/testing/` folder (never built) and two
// test-only packages: packages/test-utils (helpers for integration tests) and packages/official-clients (the contract
// suite: the platforms' official libraries against the simulator and through a gateway it starts; never built, never
// in an image). Production code is everything else in packages/ and services/; bench/ is neither (benchmarks start
// the deployables as a person does) and is held only to the rules that name no side.

/** Test code, as the `from` of a rule (regular expressions over paths from the repository root). */
const TEST_CODE = ['\\.test\\.ts$', '(^|/)src/testing/', '^packages/test-utils/', '^packages/official-clients/'];
const SOURCES = '^(packages|services)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'Modules do not import each other in a loop (type-only imports count): split what both need into a third.',
      severity: 'error',
      from: { path: '^(packages|services|bench)/' },
      to: { circular: true },
    },
    {
      name: 'no-service-imports-another',
      comment: 'A deployable never imports another (services/*): what two share belongs in a package.',
      severity: 'error',
      // One named exception: the fixture recorded exchange (docs/ADD_NEW_PLATFORM.md) exists only in that test's
      // registry, which a built service started as a process could not know, so the test runs the history service
      // in-process beside the recorder.
      from: { path: '^services/([^/]+)/', pathNot: '^services/recorder/src/fixture-exchange\\.int\\.test\\.ts$' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'no-production-import-of-simulator',
      comment:
        'The venue simulator (@depthgate/venue-sim) stands in for the platforms in tests and `./dev up --sim`; no production code imports it.',
      severity: 'error',
      from: { path: SOURCES, pathNot: [...TEST_CODE, '^packages/venue-sim/'] },
      to: { path: '^packages/venue-sim/' },
    },
    {
      name: 'no-production-import-of-testing',
      comment: 'Test helpers (src/testing/, @depthgate/test-utils) are not built; production code never imports them.',
      severity: 'error',
      from: { path: SOURCES, pathNot: TEST_CODE },
      to: { path: ['(^|/)src/testing/', '^packages/test-utils/'] },
    },
    {
      name: 'no-package-imports-service',
      comment: 'Packages sit below the deployables: production code of packages/* never imports services/*.',
      severity: 'error',
      from: { path: '^packages/', pathNot: TEST_CODE },
      to: { path: '^services/' },
    },
    {
      name: 'sql-only-in-history-store',
      comment: 'SQL lives in packages/history-store behind its querier: no other code talks to ClickHouse directly.',
      severity: 'error',
      from: { pathNot: '^packages/history-store/' },
      // Resolved into node_modules, or left unresolved where the importing package does not depend on it.
      to: { path: '(^|/)@clickhouse/' },
    },
    {
      name: 'resolvable-imports',
      comment:
        'Every import resolves (a workspace import the checker cannot follow would hide its edges from the rules above).',
      severity: 'error',
      from: {},
      // A script may import its package's build (`../dist/`), which the lint step runs before.
      to: { couldNotResolve: true, pathNot: '(^|/)dist/' },
    },
  ],
  options: {
    // Build output (the dependencies' own dist/ folders stay: @clickhouse/client resolves into one).
    exclude: { path: '^(packages|services)/[^/]+/dist/' },
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are dependencies too (a cycle of types is still a cycle).
    tsPreCompilationDeps: true,
    // `@depthgate/*` resolves to the workspace packages' sources through its `paths`, as `pnpm typecheck` does.
    tsConfig: { fileName: 'tsconfig.check.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    progress: { type: 'none' },
    // Repeated runs read only what changed (about 0.6 s instead of 2 s); the cache is keyed on file contents.
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
