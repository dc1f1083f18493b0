import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** Supply-chain rule for .github/workflows: every action is pinned by a full commit SHA, with its release named. */
const dir = path.join(__dirname, '..', '..', '..', '.github', 'workflows');
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));

describe('GitHub workflows', () => {
  it('exist', () => {
    expect(files).toEqual(expect.arrayContaining(['ci.yml', 'images.yml']));
  });

  it.each(files)('%s pins every action by commit SHA with a version comment', (file) => {
    const text = readFileSync(path.join(dir, file), 'utf8');
    parse(text); // valid YAML
    const uses = text.split('\n').filter((line) => /^\s*(-\s+)?uses:/.test(line));
    expect(uses.length).toBeGreaterThan(0);
    for (const line of uses) {
      expect(line).toMatch(/uses: [\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$/);
    }
  });

  it('give the image workflow only the permission to publish packages', () => {
    const images = parse(readFileSync(path.join(dir, 'images.yml'), 'utf8')) as {
      permissions: Record<string, string>;
      jobs: Record<string, { permissions?: Record<string, string> }>;
    };
    expect(images.permissions).toEqual({ contents: 'read' });
    expect(Object.values(images.jobs).map((j) => j.permissions)).toEqual([{ contents: 'read', packages: 'write' }]);
  });
});
