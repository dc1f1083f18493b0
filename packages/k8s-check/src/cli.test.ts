import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Finding } from './findings';

/**
 * The schema checks run in a real Node process: the model packages are ES modules that Jest's CommonJS runtime
 * cannot load. So this builds the package (a no-op when up to date) and runs its CLI on the broken fixtures.
 */
const packageDir = path.join(__dirname, '..');
const cli = path.join(packageDir, 'dist', 'cli.js');
const fixture = (name: string) => path.join(packageDir, 'fixtures', name);

function run(...files: string[]): { status: number | null; findings: Finding[] } {
  const result = spawnSync(process.execPath, [cli, '--json', ...files], { encoding: 'utf8' });
  if (result.status === 2) throw new Error(result.stderr);
  return { status: result.status, findings: JSON.parse(result.stdout) as Finding[] };
}

const of = (findings: Finding[], object: string, rule: string) =>
  findings
    .filter((f) => f.object === object && f.rule === rule)
    .map((f) => f.path)
    .sort();

beforeAll(() => {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', packageDir], { stdio: 'inherit' });
}, 120_000);

describe('k8s-check CLI (schemas)', () => {
  it('passes the valid fixture', () => {
    expect(run(fixture('valid.yaml'))).toEqual({ status: 0, findings: [] });
  });

  it('fails on a field of the wrong type', () => {
    const { status, findings } = run(fixture('wrong-type.yaml'));
    expect(status).toBe(1);
    expect(of(findings, 'Deployment/wrong-type', 'schema')).toEqual([
      'spec.replicas',
      'spec.template.spec.containers[0].ports[0].containerPort',
    ]);
  });

  it('fails on an unknown kind and on an API version Kubernetes no longer serves', () => {
    const { status, findings } = run(fixture('unknown-kind.yaml'));
    expect(status).toBe(1);
    expect(findings.filter((f) => f.rule === 'unknown-kind').map((f) => f.object)).toEqual([
      'Deploymnet/unknown-kind',
      'PodDisruptionBudget/removed-api',
    ]);
  });

  it('fails on missing required fields', () => {
    const { status, findings } = run(fixture('missing-required.yaml'));
    expect(status).toBe(1);
    expect(of(findings, 'Deployment/missing-required', 'schema')).toEqual([
      'spec.selector',
      'spec.template.spec.containers[0].name',
    ]);
    expect(of(findings, 'Service/missing-port', 'schema')).toEqual(['spec.ports[0].port']);
  });

  it('fails on fields the API does not have', () => {
    const { status, findings } = run(fixture('unknown-field.yaml'));
    expect(status).toBe(1);
    expect(of(findings, 'PodDisruptionBudget/unknown-field', 'unknown-field')).toEqual([
      'spec.minAvaliable',
      'spec.selector.matchLabel',
    ]);
  });

  it('fails on a Secret with committed data', () => {
    const { status, findings } = run(fixture('secret-data.yaml'));
    expect(status).toBe(1);
    expect(findings.map((f) => f.rule)).toEqual(['secret-data']);
  });

  it('reports YAML that does not parse', () => {
    const { status, findings } = run(fixture('valid.yaml'), __filename);
    expect(status).toBe(1);
    expect(findings.some((f) => f.rule === 'parse')).toBe(true);
  });
});
