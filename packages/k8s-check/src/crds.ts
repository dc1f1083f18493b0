/**
 * Custom resources of operators that depthgate's manifests use (infra/k8s/databases): the Altinity
 * clickhouse-operator's ClickHouseInstallation and ClickHouseKeeperInstallation. They are checked like the built-in
 * kinds, offline:
 *
 * - against the `openAPIV3Schema` of the operator's own CRDs, vendored unchanged in `crds/` (crds/README.md names
 *   the release): types, enums, required fields, and fields the schema does not have (kubectl's strict field
 *   validation rejects those too) — except below `x-kubernetes-preserve-unknown-fields`, which the API keeps as is;
 * - the templates they carry are what the operator turns into pods, claims and services, and the CRD leaves them
 *   untyped: each pod template's `spec` is checked as a Pod (schema, unknown fields and the deployment policy),
 *   each volume claim template as a PersistentVolumeClaim, each service template as a Service (`embeddedObjects`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { describe, dotted, type Finding, type K8sObject } from './findings';

type Schema = Record<string, unknown>;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface CustomKind {
  apiVersion: string;
  kind: string;
  schema: Schema;
}

/** Where the vendored CRDs are (this package's `crds/`). */
const CRD_DIR = path.resolve(__dirname, '..', 'crds');

/** Every served version of every CRD in `dir`. */
export function loadCustomKinds(dir: string = CRD_DIR): CustomKind[] {
  const kinds: CustomKind[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'), { merge: true })) {
      const crd = doc.toJS() as unknown;
      if (!isObj(crd) || crd.kind !== 'CustomResourceDefinition' || !isObj(crd.spec)) continue;
      const group = String(crd.spec.group);
      const kind = String(isObj(crd.spec.names) ? crd.spec.names.kind : '');
      for (const version of Array.isArray(crd.spec.versions) ? crd.spec.versions : []) {
        if (!isObj(version) || version.served === false || !isObj(version.schema)) continue;
        const schema = version.schema.openAPIV3Schema;
        if (isObj(schema)) kinds.push({ apiVersion: `${group}/${String(version.name)}`, kind, schema });
      }
    }
  }
  return kinds;
}

/** Keys the schema does not declare, below every object schema with `properties` that does not keep unknown fields. */
function unknownFields(schema: unknown, value: unknown, at: string, out: string[]): void {
  if (!isObj(schema)) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => unknownFields(schema.items, item, `${at}[${i}]`, out));
    return;
  }
  if (!isObj(value) || schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  const properties = isObj(schema.properties) ? schema.properties : undefined;
  for (const [key, child] of Object.entries(value)) {
    const where = at === '' ? key : `${at}.${key}`;
    if (properties && key in properties) unknownFields(properties[key], child, where, out);
    else if (isObj(schema.additionalProperties)) unknownFields(schema.additionalProperties, child, where, out);
    else if (properties && schema.additionalProperties !== true) out.push(where);
  }
}

export class CustomKindValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly kinds: readonly CustomKind[] = loadCustomKinds()) {}

  find(apiVersion: unknown, kind: unknown): CustomKind | undefined {
    return this.kinds.find((k) => k.apiVersion === apiVersion && k.kind === kind);
  }

  /** Findings of one object of a custom kind (`find` must know it). */
  validate(obj: K8sObject, spec: CustomKind): Finding[] {
    const object = describe(obj);
    const key = `${spec.apiVersion}/${spec.kind}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(spec.schema);
      this.compiled.set(key, validate);
    }
    const findings: Finding[] = [];
    if (typeof obj.metadata?.name !== 'string' || obj.metadata.name === '') {
      findings.push({ object, rule: 'schema', path: 'metadata.name', message: 'is required' });
    }
    if (!validate(obj)) {
      for (const e of (validate.errors ?? []) as ErrorObject[]) {
        const missing = typeof e.params.missingProperty === 'string' ? e.params.missingProperty : undefined;
        const where = dotted(e.instancePath);
        findings.push({
          object,
          rule: 'schema',
          path: missing ? (where === '' ? missing : `${where}.${missing}`) : where,
          message: missing ? 'is required' : (e.message ?? 'is invalid'),
        });
      }
    }
    const unknown: string[] = [];
    unknownFields(spec.schema, obj, '', unknown);
    for (const field of unknown) {
      findings.push({ object, rule: 'unknown-field', path: field, message: `unknown field in ${spec.kind}` });
    }
    return findings;
  }
}

/** The operator's templates in a ClickHouseInstallation or ClickHouseKeeperInstallation, as the objects they become. */
const TEMPLATE_KINDS: Record<string, { list: string; apiVersion: string; kind: string }[]> = {
  ClickHouseInstallation: [
    { list: 'podTemplates', apiVersion: 'v1', kind: 'Pod' },
    { list: 'volumeClaimTemplates', apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
    { list: 'serviceTemplates', apiVersion: 'v1', kind: 'Service' },
  ],
  ClickHouseKeeperInstallation: [
    { list: 'podTemplates', apiVersion: 'v1', kind: 'Pod' },
    { list: 'volumeClaimTemplates', apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
    { list: 'serviceTemplates', apiVersion: 'v1', kind: 'Service' },
  ],
};

/**
 * The Kubernetes objects an operator's resource stands for, to be checked like any other: named
 * `<resource>/<template>`, with the template's labels.
 */
export function embeddedObjects(obj: K8sObject): K8sObject[] {
  const templates = TEMPLATE_KINDS[String(obj.kind)];
  if (!templates || !String(obj.apiVersion).includes('altinity.com/')) return [];
  const spec = (obj as { spec?: { templates?: Record<string, unknown> } }).spec;
  const out: K8sObject[] = [];
  for (const t of templates) {
    const list = spec?.templates?.[t.list];
    for (const template of Array.isArray(list) ? list : []) {
      if (!isObj(template)) continue;
      const metadata = isObj(template.metadata) ? template.metadata : {};
      out.push({
        apiVersion: t.apiVersion,
        kind: t.kind,
        metadata: { ...metadata, name: `${String(obj.metadata?.name)}-${String(template.name)}` },
        spec: template.spec,
      } as K8sObject);
    }
  }
  return out;
}
