// Writes the lists that cannot import the platform registry from it (docs/ADD_NEW_PLATFORM.md): the client's
// and the Explorer's exchanges (packages/client/src/exchanges.ts; @depthgate/client is published without
// dependencies), and the Python client's (clients/python/depthgate/exchanges.py). Run by `pnpm run build` after packages/platforms is compiled, and by `pnpm run generate`;
// packages/platforms/src/generated.test.ts fails when a committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import platforms from '../dist/index.js';

const { EXCHANGES, renderClientExchanges, renderPythonExchanges } = platforms;
const targets = [
  ['../../client/src/exchanges.ts', renderClientExchanges],
  ['../../../clients/python/depthgate/exchanges.py', renderPythonExchanges],
];
for (const [file, render] of targets) {
  const target = fileURLToPath(new URL(file, import.meta.url));
  const text = render(EXCHANGES);
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // first generation
  }
  if (current !== text) {
    writeFileSync(target, text);
    console.log(`generated ${target}`);
  }
}
