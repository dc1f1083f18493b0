import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

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
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['jest.*.js'],
    languageOptions: { globals: { ...globals.jest } },
  },
);
