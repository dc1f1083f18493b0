/**
 * The browser path: the package bundled for the browser (esbuild, `platform: 'browser'`) must not reach any Node
 * built-in, and a program that imports one thing must not carry the rest (tree-shaking, `sideEffects: false`).
 */
import { builtinModules } from 'node:module';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';

const entry = path.join(__dirname, 'index.ts');
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** Fails the build on any import of a Node built-in (with or without `node:`), and records every import. */
function noNodeBuiltins(imported: string[]): Plugin {
  return {
    name: 'no-node-builtins',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        imported.push(args.path);
        if (builtins.has(args.path) || args.path.startsWith('node:')) {
          return { errors: [{ text: `${args.importer} imports the Node built-in ${args.path}` }] };
        }
        return undefined;
      });
    },
  };
}

async function bundle(contents: string) {
  const imported: string[] = [];
  const result = await build({
    stdin: { contents, resolveDir: __dirname, loader: 'ts', sourcefile: 'app.ts' },
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    logLevel: 'silent',
    plugins: [noNodeBuiltins(imported)],
  });
  return { code: result.outputFiles[0]?.text ?? '', imported };
}

describe('browser bundle', () => {
  it('bundles for the browser with no Node built-in and no dependency', async () => {
    const { code, imported } = await bundle(`export * from ${JSON.stringify(entry)};`);
    expect(code).toContain('HistoryClient');
    // Every import is one of the package's own files.
    expect(imported.filter((p) => !p.startsWith('./') && p !== entry)).toEqual([]);
  });

  it('fails on a Node built-in (the check itself works)', async () => {
    await expect(bundle(`import { readFileSync } from 'node:fs'; export const x = readFileSync;`)).rejects.toThrow(
      /imports the Node built-in node:fs/,
    );
  });

  it('tree-shakes: a program using only Decimal carries neither client nor the book', async () => {
    const all = await bundle(`export * from ${JSON.stringify(entry)};`);
    const small = await bundle(
      `import { Decimal } from ${JSON.stringify(entry)}; export const x = Decimal.parse('0.1').add('0.2').toString();`,
    );
    expect(small.code).not.toContain('/api/v1/');
    expect(small.code).not.toContain('x-ndjson');
    expect(small.code).not.toContain('crossed');
    expect(small.code.length).toBeLessThan(all.code.length / 4);
  });
});
