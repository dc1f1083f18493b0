// docs/official-clients-results.md: the table library × method × result the contract suite produces.
import type { LibrarySpec, Mode, Result } from './harness.ts';
import { MODES } from './harness.ts';

export const REPORT_PATH = 'docs/official-clients-results.md';
const MAX_PROBLEMS_SHOWN = 6;

const cell = (r: Result | undefined) => {
  if (!r) return '—';
  if (r.exception) return r.outcome === 'pass' ? 'pass (exception no longer needed)' : 'exception';
  return r.outcome === 'fail' ? '**FAIL**' : r.outcome;
};

const escape = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The whole document; the same results give the same bytes. */
export function renderReport(libraries: readonly LibrarySpec<unknown>[], results: readonly Result[]): string {
  const find = (library: string, method: string, mode: Mode) =>
    results.find((r) => r.library === library && r.method === method && r.mode === mode);
  const count = (library: string, mode: Mode, outcome: Result['outcome']) =>
    results.filter((r) => r.library === library && r.mode === mode && r.outcome === outcome && !r.exception).length;

  const out: string[] = [];
  out.push('# Official client libraries: contract results');
  out.push('');
  out.push(
    'Produced by the contract suite (`packages/official-clients`, part of `./dev test`); do not edit. `./dev contract-report`',
    'rewrites it, and `./dev test` fails while it differs from what the suite produces. Every read-only method of each',
    'library is called unchanged, **directly** against the simulator (the library signs with the simulator’s test',
    'credentials, so its own signing is checked) and **through the gateway** (the library holds a depthgate key and no',
    'platform credentials; the gateway signs). How to point each library at depthgate: [official-clients.md](official-clients.md).',
    '',
    '- **pass**: every request answered 2xx; private reads signed and the signature verified by the simulator (through',
    '  the gateway: sent by the gateway); the body accepted by the type the library declares for the method (or by',
    '  the platform’s documented shape, where the library declares none or the docs contradict it; the column',
    '  says which) and by the table’s further checks (lists not empty, fields ccxt’s parsers read).',
    '- **absent**: a read of one object of the account by id, which the simulator’s account does not have: the call',
    '  is signed and the platform answers its 404.',
    '- **exception**: cannot work for a platform-side reason, given below; still called, and the suite fails if it',
    '  starts to work.',
    '- **FAIL**: the reasons are listed under the library.',
  );
  out.push('');
  out.push('## Summary');
  out.push('');
  out.push(
    '| library | methods called | direct: pass / absent / FAIL | gateway: pass / absent / FAIL | exceptions | not called |',
  );
  out.push('| --- | ---: | --- | --- | ---: | ---: |');
  for (const lib of libraries) {
    const cols = MODES.map((mode) =>
      ['pass', 'absent', 'fail'].map((o) => count(lib.label, mode, o as Result['outcome'])).join(' / '),
    );
    const exceptions = lib.methods.filter((m) => m.exception).length;
    out.push(
      `| ${lib.label} | ${lib.methods.length} | ${cols[0]} | ${cols[1]} | ${exceptions} | ${Object.keys(lib.notCalled).length} |`,
    );
  }

  for (const lib of libraries) {
    out.push('');
    out.push(`## ${lib.label} (${lib.pkg})`);
    out.push('');
    out.push('| method | access | direct | gateway | checked against |');
    out.push('| --- | --- | --- | --- | --- |');
    for (const m of lib.methods) {
      const direct = find(lib.label, m.name, 'direct');
      const gateway = find(lib.label, m.name, 'gateway');
      const against = (direct ?? gateway)?.checkedAgainst ?? '';
      out.push(`| \`${m.name}\` | ${m.access} | ${cell(direct)} | ${cell(gateway)} | ${escape(against)} |`);
    }
    const failures = lib.methods.flatMap((m) =>
      MODES.map((mode) => find(lib.label, m.name, mode)).filter(
        (r): r is Result => r !== undefined && r.outcome === 'fail' && !r.exception,
      ),
    );
    if (failures.length > 0) {
      out.push('');
      out.push('Failures:');
      out.push('');
      for (const r of failures) {
        const shown = r.problems.slice(0, MAX_PROBLEMS_SHOWN).map(escape);
        const more =
          r.problems.length > MAX_PROBLEMS_SHOWN ? ` (and ${r.problems.length - MAX_PROBLEMS_SHOWN} more)` : '';
        out.push(`- \`${r.method}\` (${r.mode}): ${shown.join('; ')}${more}`);
      }
    }
    const exceptions = lib.methods.filter((m) => m.exception);
    if (exceptions.length > 0) {
      out.push('');
      out.push('Exceptions:');
      out.push('');
      for (const m of exceptions) {
        const seen = MODES.map((mode) => {
          const r = find(lib.label, m.name, mode);
          return `${mode}: ${escape(r?.problems.slice(0, 2).join('; ') || 'passed')}`;
        });
        out.push(`- \`${m.name}\`: ${m.exception ?? ''}. Seen: ${seen.join('; ')}`);
      }
    }
    const byReason = new Map<string, string[]>();
    for (const [method, reason] of Object.entries(lib.notCalled))
      byReason.set(reason, [...(byReason.get(reason) ?? []), method]);
    if (byReason.size > 0) {
      out.push('');
      out.push('Not called:');
      out.push('');
      for (const [reason, methods] of byReason) out.push(`- ${reason}: ${methods.map((m) => `\`${m}\``).join(', ')}`);
    }
  }
  out.push('');
  return out.join('\n');
}
