/** A Kubernetes object as parsed from YAML: only apiVersion, kind and metadata.name are relied on. */
export type K8sObject = Record<string, unknown> & {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown } & Record<string, unknown>;
};

/** The rules a finding can come from. `schema` and `unknown-field` come from schema validation, the rest are policy. */
export type Rule =
  | 'parse'
  | 'unknown-kind'
  | 'schema'
  | 'unknown-field'
  | 'probes'
  | 'resources'
  | 'image-tag'
  | 'privileged'
  | 'privilege-escalation'
  | 'run-as-non-root'
  | 'read-only-root-filesystem'
  | 'capabilities'
  | 'seccomp'
  | 'host-namespaces'
  | 'host-path'
  | 'host-port'
  | 'secret-data';

export interface Finding {
  /** `Kind/name` (with the namespace when set) or the file for parse errors. */
  object: string;
  rule: Rule;
  /** Where in the object, e.g. `spec.template.spec.containers[0]`. */
  path: string;
  message: string;
}

export function describe(obj: K8sObject): string {
  const kind = typeof obj.kind === 'string' ? obj.kind : '(no kind)';
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '(no name)';
  const ns = typeof obj.metadata?.namespace === 'string' ? `${obj.metadata.namespace}/` : '';
  return `${kind}/${ns}${name}`;
}

export function formatFinding(f: Finding): string {
  return `${f.object}: [${f.rule}] ${f.path ? `${f.path}: ` : ''}${f.message}`;
}

/** A JSON pointer as a dotted path: `/spec/template/spec/containers/0/image` → `spec.template.spec.containers[0].image` */
export function dotted(pointer: string): string {
  return pointer
    .split('/')
    .filter((s) => s !== '')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc === '' ? s : `${acc}.${s}`), '');
}
