import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// The start of an SQL statement (upper case, as the house writes SQL): text that begins so is SQL, not prose.
const SQL_START =
  '^\\s*(SELECT|WITH|INSERT\\s+INTO|(CREATE|ALTER|DROP|RENAME|TRUNCATE|OPTIMIZE|ATTACH|DETACH|EXISTS)\\s+(TABLE|DATABASE|VIEW|DICTIONARY|MATERIALIZED)|SYSTEM\\s+[A-Z]|KILL\\s+QUERY|SHOW\\s+(TABLES|DATABASES|CREATE))\\b';
const SQL_MESSAGE =
  'sql-only-in-history-store: SQL text lives in packages/history-store, behind its querier (docs/architecture.md, "Layering rules"); add a named query there.';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.dev/**',
      '.tools/**',
      'coverage/**',
      'infra/k8s/schemas/**',
      // @depthgate/client's API reference, generated on demand (not committed)
      'docs/client-api/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
      'prefer-const': 'error',
    },
  },
  {
    // CLIs, scripts and benchmarks talk to a terminal.
    files: [
      '**/src/cli.ts',
      '**/src/cli/**/*.ts',
      'bench/**/*.{ts,mts,js,mjs}',
      '**/scripts/**/*.{ts,js,mjs}',
      '**/examples/**/*.{ts,mts,js,mjs}',
    ],
    rules: { 'no-console': 'off' },
  },
  {
    // The Explorer page runs in browsers (packages/explorer, bundled by Vite).
    files: ['packages/explorer/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The dependency checker (.dependency-cruiser.cjs) keeps @clickhouse/client inside packages/history-store; this
    // keeps SQL text there too. Tests may carry SQL as injection probes.
    ignores: ['packages/history-store/**', '**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "TaggedTemplateExpression[tag.name='sql']", message: SQL_MESSAGE },
        { selector: `Literal[value=/${SQL_START}/]`, message: SQL_MESSAGE },
        { selector: `TemplateLiteral[quasis.0.value.cooked=/${SQL_START}/]`, message: SQL_MESSAGE },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['jest.*.js'],
    languageOptions: { globals: { ...globals.jest } },
  },
);
