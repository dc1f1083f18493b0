import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Finding, K8sObject, Rule } from './findings';
import { parseManifests } from './load';
import { checkPolicy, parseImage } from './policy';

type Mutable = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A fresh copy of fixtures/valid.yaml, which passes every rule. */
function valid(): Mutable {
  const text = readFileSync(path.join(__dirname, '..', 'fixtures', 'valid.yaml'), 'utf8');
  const { objects } = parseManifests(text, 'valid.yaml');
  return structuredClone(objects[0]) as Mutable;
}

const podOf = (d: Mutable): Mutable => d.spec.template.spec;
const containerOf = (d: Mutable): Mutable => podOf(d).containers[0];
const rules = (findings: Finding[]): Rule[] => [...new Set(findings.map((f) => f.rule))];

function violations(mutate: (d: Mutable) => void): Finding[] {
  const d = valid();
  mutate(d);
  return checkPolicy([d as K8sObject]);
}

describe('policy', () => {
  it('accepts the valid fixture', () => {
    expect(checkPolicy([valid() as K8sObject])).toEqual([]);
  });

  const cases: [string, Rule, (d: Mutable) => void][] = [
    ['a missing liveness probe', 'probes', (d) => delete containerOf(d).livenessProbe],
    ['a missing readiness probe', 'probes', (d) => delete containerOf(d).readinessProbe],
    ['a missing startup probe', 'probes', (d) => delete containerOf(d).startupProbe],
    ['missing resource limits', 'resources', (d) => delete containerOf(d).resources.limits],
    ['a missing memory request', 'resources', (d) => delete containerOf(d).resources.requests.memory],
    ['the latest tag', 'image-tag', (d) => (containerOf(d).image = 'ghcr.io/depthgate/example:latest')],
    ['an untagged image', 'image-tag', (d) => (containerOf(d).image = 'registry.local:5000/depthgate/example')],
    ['a privileged container', 'privileged', (d) => (containerOf(d).securityContext.privileged = true)],
    [
      'allowPrivilegeEscalation not set to false',
      'privilege-escalation',
      (d) => delete containerOf(d).securityContext.allowPrivilegeEscalation,
    ],
    ['runAsNonRoot missing', 'run-as-non-root', (d) => delete podOf(d).securityContext.runAsNonRoot],
    ['runAsUser 0', 'run-as-non-root', (d) => (containerOf(d).securityContext.runAsUser = 0)],
    [
      'a writable root filesystem',
      'read-only-root-filesystem',
      (d) => (containerOf(d).securityContext.readOnlyRootFilesystem = false),
    ],
    [
      'capabilities not dropped',
      'capabilities',
      (d) => (containerOf(d).securityContext.capabilities.drop = ['NET_RAW']),
    ],
    ['an added capability', 'capabilities', (d) => (containerOf(d).securityContext.capabilities.add = ['NET_ADMIN'])],
    ['no seccomp profile', 'seccomp', (d) => delete podOf(d).securityContext.seccompProfile],
    ['hostNetwork', 'host-namespaces', (d) => (podOf(d).hostNetwork = true)],
    ['hostPID', 'host-namespaces', (d) => (podOf(d).hostPID = true)],
    ['hostIPC', 'host-namespaces', (d) => (podOf(d).hostIPC = true)],
    [
      'a hostPath volume',
      'host-path',
      (d) => (podOf(d).volumes = [{ name: 'docker', hostPath: { path: '/var/run' } }]),
    ],
    ['a hostPort', 'host-port', (d) => (containerOf(d).ports[0].hostPort = 8080)],
  ];
  it.each(cases)('catches %s', (_what, rule, mutate) => {
    expect(rules(violations(mutate))).toEqual([rule]);
  });

  it('checks init containers for resources and security, and sidecars for probes', () => {
    const plainInit = violations((d) => {
      const init = structuredClone(containerOf(d));
      delete init.livenessProbe;
      delete init.resources;
      podOf(d).initContainers = [init];
    });
    expect(rules(plainInit)).toEqual(['resources']);
    const sidecar = violations((d) => {
      const init = structuredClone(containerOf(d));
      delete init.startupProbe;
      init.restartPolicy = 'Always';
      podOf(d).initContainers = [init];
    });
    expect(rules(sidecar)).toEqual(['probes']);
  });

  it('does not ask a Job for probes, but for everything else', () => {
    const d = valid();
    const job = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'job' },
      spec: { schedule: '@daily', jobTemplate: { spec: { template: d.spec.template } } },
    };
    const container = job.spec.jobTemplate.spec.template.spec.containers[0];
    delete container.livenessProbe;
    delete container.readinessProbe;
    delete container.startupProbe;
    expect(checkPolicy([job])).toEqual([]);
    container.image = 'busybox';
    expect(rules(checkPolicy([job]))).toEqual(['image-tag']);
  });

  it('refuses Secrets carrying data, accepts references to them', () => {
    const secret = (body: Mutable) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, ...body });
    expect(rules(checkPolicy([secret({ data: { KEY: 'c2VjcmV0' } })]))).toEqual(['secret-data']);
    expect(rules(checkPolicy([secret({ stringData: { KEY: 'secret' } })]))).toEqual(['secret-data']);
    expect(checkPolicy([secret({ data: {} })])).toEqual([]);
  });

  it('parses image references', () => {
    expect(parseImage('node:24.21.0-bookworm-slim')).toEqual({ tag: '24.21.0-bookworm-slim', digest: false });
    expect(parseImage('registry.local:5000/a/b')).toEqual({ tag: undefined, digest: false });
    expect(parseImage('ghcr.io/a/b@sha256:abc')).toEqual({ tag: undefined, digest: true });
    expect(parseImage('ghcr.io/a/b:1.0@sha256:abc')).toEqual({ tag: '1.0', digest: true });
  });
});
