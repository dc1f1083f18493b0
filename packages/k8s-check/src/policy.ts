import { describe, type Finding, type K8sObject, type Rule } from './findings';

/**
 * depthgate's deployment policy, checked on every rendered object (docs/operations.md, "Manifest validation"):
 *
 * - every container of a long-running workload has liveness, readiness and startup probes;
 * - every container (init containers too) has CPU and memory requests and limits;
 * - every image names a tag or a digest, and the tag is not `latest`;
 * - nothing privileged: no `privileged`, `allowPrivilegeEscalation: false` set explicitly, non-root
 *   (`runAsNonRoot`, on the pod or the container), read-only root filesystem, capabilities: drop ALL and add none,
 *   a seccomp profile (RuntimeDefault or Localhost);
 * - no host namespaces (hostNetwork, hostPID, hostIPC), no hostPath volumes, no hostPort;
 * - no Secret object carries data: secret values are never committed (Secrets are created by operators).
 *
 * Pure: objects in, findings out; no I/O.
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const asObj = (v: unknown): Obj => (isObj(v) ? v : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Where the pod spec of each workload kind lives, and whether its containers run until stopped (need probes). */
const POD_SPEC_PATHS: Record<string, { path: string[]; longRunning: boolean }> = {
  Pod: { path: ['spec'], longRunning: true },
  Deployment: { path: ['spec', 'template', 'spec'], longRunning: true },
  StatefulSet: { path: ['spec', 'template', 'spec'], longRunning: true },
  DaemonSet: { path: ['spec', 'template', 'spec'], longRunning: true },
  ReplicaSet: { path: ['spec', 'template', 'spec'], longRunning: true },
  Job: { path: ['spec', 'template', 'spec'], longRunning: false },
  CronJob: { path: ['spec', 'jobTemplate', 'spec', 'template', 'spec'], longRunning: false },
};

const SECCOMP_TYPES = new Set(['RuntimeDefault', 'Localhost']);

/** `registry:5000/name:tag@sha256:…` → its tag (undefined when none) and whether it has a digest. */
export function parseImage(image: string): { tag?: string; digest: boolean } {
  const at = image.indexOf('@');
  const digest = at >= 0;
  const withoutDigest = digest ? image.slice(0, at) : image;
  const lastSegment = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  return { tag: colon >= 0 ? lastSegment.slice(colon + 1) : undefined, digest };
}

export function checkPolicy(objects: readonly K8sObject[]): Finding[] {
  const findings: Finding[] = [];
  for (const obj of objects) findings.push(...checkObject(obj));
  return findings;
}

function checkObject(obj: K8sObject): Finding[] {
  const findings: Finding[] = [];
  const name = describe(obj);
  const add = (rule: Rule, path: string, message: string) => findings.push({ object: name, rule, path, message });
  const kind = typeof obj.kind === 'string' ? obj.kind : '';

  if (kind === 'Secret' && obj.apiVersion === 'v1') {
    for (const field of ['data', 'stringData']) {
      if (isObj(obj[field]) && Object.keys(obj[field]).length > 0) {
        add('secret-data', field, 'Secret values must not be committed: create the Secret in the cluster instead');
      }
    }
  }

  const location = POD_SPEC_PATHS[kind];
  if (!location) return findings;
  let pod: unknown = obj;
  for (const key of location.path) pod = asObj(pod)[key];
  const podPath = location.path.join('.');
  const podSpec = asObj(pod);
  const podSecurity = asObj(podSpec.securityContext);

  for (const hostField of ['hostNetwork', 'hostPID', 'hostIPC']) {
    if (podSpec[hostField] === true) add('host-namespaces', `${podPath}.${hostField}`, `${hostField} is not allowed`);
  }
  asArray(podSpec.volumes).forEach((volume, i) => {
    if (isObj(volume) && volume.hostPath !== undefined) {
      add('host-path', `${podPath}.volumes[${i}]`, `hostPath volume "${String(volume.name)}" is not allowed`);
    }
  });

  const containerLists: [string, boolean][] = [
    ['initContainers', false],
    ['containers', location.longRunning],
  ];
  for (const [listName, needsProbes] of containerLists) {
    asArray(podSpec[listName]).forEach((raw, i) => {
      const c = asObj(raw);
      const path = `${podPath}.${listName}[${i}]`;
      const label = typeof c.name === 'string' ? `container "${c.name}"` : `container #${i}`;
      // An init container with restartPolicy Always is a sidecar: it runs as long as the pod and needs probes too.
      const probes = needsProbes || (listName === 'initContainers' && c.restartPolicy === 'Always');
      if (probes) {
        for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
          if (!isObj(c[probe])) add('probes', path, `${label} has no ${probe}`);
        }
      }

      const resources = asObj(c.resources);
      for (const section of ['requests', 'limits']) {
        const values = asObj(resources[section]);
        for (const resource of ['cpu', 'memory']) {
          if (values[resource] === undefined) add('resources', path, `${label} has no ${resource} ${section}`);
        }
      }

      if (typeof c.image !== 'string' || c.image === '') {
        add('image-tag', path, `${label} has no image`);
      } else {
        const { tag, digest } = parseImage(c.image);
        if (tag === 'latest') add('image-tag', path, `${label} uses the "latest" tag (${c.image})`);
        else if (tag === undefined && !digest) add('image-tag', path, `${label} has an untagged image (${c.image})`);
      }

      asArray(c.ports).forEach((port, j) => {
        if (isObj(port) && port.hostPort !== undefined) {
          add('host-port', `${path}.ports[${j}]`, `${label} binds hostPort ${String(port.hostPort)}`);
        }
      });

      const sc = asObj(c.securityContext);
      if (sc.privileged === true) add('privileged', path, `${label} is privileged`);
      if (sc.allowPrivilegeEscalation !== false) {
        add('privilege-escalation', path, `${label} must set securityContext.allowPrivilegeEscalation: false`);
      }
      const nonRoot = sc.runAsNonRoot ?? podSecurity.runAsNonRoot;
      const uid = sc.runAsUser ?? podSecurity.runAsUser;
      if (nonRoot !== true) add('run-as-non-root', path, `${label} must run with runAsNonRoot: true`);
      else if (uid === 0) add('run-as-non-root', path, `${label} sets runAsUser 0 (root)`);
      if (sc.readOnlyRootFilesystem !== true) {
        add('read-only-root-filesystem', path, `${label} must set securityContext.readOnlyRootFilesystem: true`);
      }
      const caps = asObj(sc.capabilities);
      if (!asArray(caps.drop).includes('ALL')) add('capabilities', path, `${label} must drop ALL capabilities`);
      if (asArray(caps.add).length > 0) {
        add('capabilities', path, `${label} adds capabilities (${asArray(caps.add).join(', ')})`);
      }
      const seccomp = asObj(sc.seccompProfile ?? podSecurity.seccompProfile);
      if (!SECCOMP_TYPES.has(String(seccomp.type))) {
        add('seccomp', path, `${label} needs seccompProfile RuntimeDefault or Localhost (pod or container)`);
      }
    });
  }
  return findings;
}
