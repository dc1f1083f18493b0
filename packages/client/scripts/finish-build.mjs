// The package is CommonJS by default (no "type" in package.json); dist/esm holds ES modules, which Node (and
// TypeScript's module detection) recognise by this marker. Run after `tsc -b` (the root `pnpm build` does).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
mkdirSync(join(dist, 'esm'), { recursive: true });
writeFileSync(join(dist, 'esm', 'package.json'), '{ "type": "module", "sideEffects": false }\n');
