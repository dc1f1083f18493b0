// Three projects: `unit` (next to the code, needs nothing running), `integration` (`*.int.test.ts`, needs the Redis
// and ClickHouse that `./dev test` starts) and `cluster` (`*.cluster.test.ts`, needs the ClickHouse cluster and the
// Redis that `./dev test --cluster` starts).
const fs = require('node:fs');
const path = require('node:path');

// Workspace packages resolve to their TypeScript sources, so tests never need a build first; a package's test
// helpers (src/testing/index.ts, never built) are its `/testing` entry.
// packages/client writes its relative imports with `.js` (ES modules need the extension); Jest resolves them to
// the TypeScript sources.
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
for (const dir of ['packages', 'services']) {
  for (const name of fs.readdirSync(path.join(__dirname, dir))) {
    const index = path.join(__dirname, dir, name, 'src', 'index.ts');
    if (fs.existsSync(index)) moduleNameMapper[`^@depthgate/${name}$`] = index;
    const testing = path.join(__dirname, dir, name, 'src', 'testing', 'index.ts');
    if (fs.existsSync(testing)) moduleNameMapper[`^@depthgate/${name}/testing$`] = testing;
  }
}

// Dependencies shipped only as ES modules are compiled to CommonJS for Jest by swc.
// polymarket-us (CommonJS) loads `ws` with a dynamic import and requires @noble/ed25519 (ES modules only).
const esmOnly = ['jose', 'hyparquet-writer', 'hyparquet', 'polymarket-us', '@noble[+/]ed25519'];

const common = {
  testEnvironment: 'node',
  transform: {
    // `.mts`: packages/client/examples, whose modules the unit tests import (backtest-example.test.ts).
    '^.+\\.(m?t|m?j)s$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2024' },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${esmOnly.join('|')})[@/])`],
  moduleNameMapper,
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/bench'],
  // The official-clients contract suite runs under `node --test` (packages/official-clients/README.md).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/packages/official-clients/'],
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['**/src/**/*.test.ts'],
      testPathIgnorePatterns: [...common.testPathIgnorePatterns, '\\.int\\.test\\.ts$', '\\.cluster\\.test\\.ts$'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['**/src/**/*.int.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/jest.integration-setup.js'],
    },
    {
      ...common,
      displayName: 'cluster',
      testMatch: ['**/src/**/*.cluster.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/jest.integration-setup.js'],
    },
  ],
};
