/**
 * docs/history.md against the contract: its field tables are rendered from the generated OpenAPI document
 * (testing/contract-docs.ts) and must be what is written (WRITE_DOCS=1 rewrites them), and its errors table may
 * only pair a code with the status that code is answered with.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, statusFor, type ErrorCode } from '@depthgate/service-kit';
import { repoRoot } from '@depthgate/test-utils';
import { renderTables } from '../testing/contract-docs';
import { openApiDocument } from './openapi';

const DOC = path.join(repoRoot, 'docs', 'history.md');
const doc = openApiDocument({ defaultLimit: 1000, maxLimit: 1_000_000, queryTimeoutMs: 10_000, maxBookDepth: 10_000 });
const components = (doc.components as { schemas: Record<string, never> }).schemas;

describe('docs/history.md', () => {
  const text = readFileSync(DOC, 'utf8');

  it('shows the fields of the answers as the contract’s schemas say', () => {
    const rendered = renderTables(text, components);
    if (process.env.WRITE_DOCS === '1' && rendered.text !== text) writeFileSync(DOC, rendered.text);
    expect(rendered.names).toEqual([
      'SnapshotRow',
      'DeltaRow',
      'TradeRow',
      'TradeLine',
      'Bar',
      'Gap',
      'EndLine',
      'Coverage',
      'Book',
    ]);
    // (WRITE_DOCS=1 pnpm exec jest --selectProjects unit --testPathPatterns contract/docs rewrites the tables.)
    expect(text).toBe(rendered.text);
  });

  it('pairs every error code with its status', () => {
    const table = text.slice(text.indexOf('| status | `error` | when |'));
    const pairs = [...table.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map(([, status, code]) => [
      code,
      Number(status),
    ]);
    expect(pairs.length).toBeGreaterThan(10);
    for (const [code, status] of pairs) {
      expect(ERROR_CODES).toContain(code);
      expect([code, status]).toEqual([code, statusFor(code as ErrorCode)]);
    }
  });
});
