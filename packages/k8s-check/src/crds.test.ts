import { spawnSync, execFileSync } from 'node:child_process';
import path from 'node:path';
import { embeddedObjects, loadCustomKinds } from './crds';
import type { Finding, K8sObject } from './findings';

/** Schema checks run in the built CLI, like cli.test.ts (the model packages are ES modules Jest cannot load). */
const packageDir = path.join(__dirname, '..');
const cli = path.join(packageDir, 'dist', 'cli.js');

function run(fixture: string): { status: number | null; findings: string[] } {
  const result = spawnSync(process.execPath, [cli, '--json', path.join(packageDir, 'fixtures', fixture)], {
    encoding: 'utf8',
  });
  if (result.status === 2) throw new Error(result.stderr);
  return {
    status: result.status,
    findings: (JSON.parse(result.stdout) as Finding[]).map((f) => `${f.object} ${f.rule} ${f.path}`).sort(),
  };
}

beforeAll(() => {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', packageDir], { stdio: 'inherit' });
}, 120_000);

describe("the ClickHouse operator's resources (vendored CRDs)", () => {
  it('are known from the served versions of both CRDs', () => {
    expect(loadCustomKinds().map((k) => `${k.apiVersion} ${k.kind}`)).toEqual(
      expect.arrayContaining([
        'clickhouse.altinity.com/v1 ClickHouseInstallation',
        'clickhouse-keeper.altinity.com/v1 ClickHouseKeeperInstallation',
      ]),
    );
  });

  it('stand for the pods, claims and services their templates become', () => {
    const chi: K8sObject = {
      apiVersion: 'clickhouse.altinity.com/v1',
      kind: 'ClickHouseInstallation',
      metadata: { name: 'x' },
      spec: {
        templates: {
          podTemplates: [{ name: 'p', metadata: { labels: { a: 'b' } }, spec: {} }],
          serviceTemplates: [{ name: 's', spec: {} }],
        },
      },
    };
    expect(embeddedObjects(chi)).toEqual([
      { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' }, name: 'x-p' }, spec: {} },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x-s' }, spec: {} },
    ]);
  });

  it('pass a valid installation', () => {
    expect(run('chi-valid.yaml')).toEqual({ status: 0, findings: [] });
  });

  it("report the CRD schema's types and unknown fields, and the policy on the pods of the templates", () => {
    const { status, findings } = run('chi-broken.yaml');
    expect(status).toBe(1);
    expect(findings).toEqual(
      expect.arrayContaining([
        'ClickHouseInstallation/broken schema spec.configuration.clusters[0].layout.replicasCount',
        'ClickHouseInstallation/broken unknown-field spec.configuration.clusters[0].layout.shardz',
        'PersistentVolumeClaim/broken-data unknown-field spec.accessModez',
        'Pod/broken-clickhouse unknown-field spec.containers[0].bogus',
        'Pod/broken-clickhouse host-namespaces spec.hostNetwork',
        'Pod/broken-clickhouse image-tag spec.containers[0]',
        'Pod/broken-clickhouse probes spec.containers[0]',
      ]),
    );
  });
});
