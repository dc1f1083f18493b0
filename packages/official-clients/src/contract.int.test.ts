// The contract suite: every read-only method of the official client libraries, called unchanged, directly against
// the simulator and through a gateway started here against it; docs/official-clients-results.md is its table.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '@depthgate/gateway';
import { repoRoot } from '@depthgate/test-utils';
import type { Simulator } from '@depthgate/venue-sim';
import { readCatalogue } from './catalogue.ts';
import { DeclaredTypes } from './declared-types.ts';
import { MODES, runMethod, type Env, type LibrarySpec, type Mode, type Result } from './harness.ts';
import { LIBRARIES } from './libraries/index.ts';
import { REPORT_PATH, renderReport } from './report.ts';
import { BASE_DOMAIN, startContractStack, type ContractStack } from './stack.ts';

let stack: ContractStack;
let sim: Simulator;
let gateway: RunningGateway;
let env: Env;
let types: DeclaredTypes;
const results: Result[] = [];
const clients = new Map<string, unknown>();

before(async () => {
  stack = await startContractStack('contract');
  ({ sim, gateway } = stack);
  const { key } = stack;
  const catalogue = await readCatalogue(sim);
  env = {
    sim,
    gateway: { url: `http://127.0.0.1:${gateway.port}`, port: gateway.port, key, baseDomain: BASE_DOMAIN },
    catalogue,
  };
  types = DeclaredTypes.load(
    LIBRARIES.flatMap((lib) => lib.methods.map((m) => m.type ?? lib.declared(m.name)).filter((r) => r !== undefined)),
  );
});

after(async () => {
  await stack?.close();
});

function clientFor(lib: LibrarySpec<unknown>, mode: Mode): unknown {
  const id = `${lib.label}:${mode}`;
  if (!clients.has(id)) clients.set(id, lib.client(mode, env));
  return clients.get(id);
}

for (const lib of LIBRARIES) {
  describe(lib.pkg, () => {
    for (const spec of lib.methods) {
      for (const mode of MODES) {
        it(`${spec.name} (${mode})`, async () => {
          const result = await runMethod(lib, spec, clientFor(lib, mode), mode, env, types);
          results.push(result);
          if (spec.exception) {
            assert.notEqual(result.outcome, 'pass', `works now: remove the exception (${spec.exception})`);
          } else if (result.problems.length > 0) {
            assert.fail(`${result.problems.join('\n')}\nrequests: ${result.requests.join(', ') || 'none'}`);
          }
        });
      }
    }
  });
}

describe('the results table', () => {
  it(`${REPORT_PATH} is what this run produced (DG_WRITE_CONTRACT_REPORT=1 rewrites it)`, async () => {
    const expected = LIBRARIES.reduce((n, lib) => n + lib.methods.length * MODES.length, 0);
    assert.equal(results.length, expected, 'every method ran in both modes');
    const file = path.join(repoRoot, REPORT_PATH);
    const produced = renderReport(LIBRARIES, results);
    if (process.env.DG_WRITE_CONTRACT_REPORT === '1') await writeFile(file, produced);
    const committed = await readFile(file, 'utf8').catch(() => '');
    assert.equal(committed, produced, `${REPORT_PATH} is stale: run ./dev contract-report`);
  });
});
