import path from 'node:path';
import { CustomKindValidator } from './crds';
import { describe, dotted, type Finding, type K8sObject } from './findings';
import { findKind, KINDS, type KindSpec } from './kinds';
import { UnknownFieldChecker } from './strict';

interface ModelClass {
  new (data: unknown): { validate(): void };
}

interface AjvLikeError {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Loads a kind's model class. The model packages are ES modules only, so they are imported, never required. */
async function loadModel(spec: KindSpec): Promise<ModelClass> {
  const mod = (await import(spec.module)) as Record<string, unknown>;
  const model = mod[spec.kind];
  if (typeof model !== 'function') throw new Error(`${spec.module} does not export ${spec.kind}`);
  return model as ModelClass;
}

/**
 * Validates each object against the Kubernetes schema of its kind (types, enums, formats, required fields), reports
 * unknown kinds and API versions, and unknown fields. Resolves to the findings; never throws for a bad object.
 */
export class SchemaValidator {
  private readonly models = new Map<string, Promise<ModelClass>>();
  private strict?: UnknownFieldChecker;
  private custom?: CustomKindValidator;

  constructor(private readonly options: { unknownFields?: boolean } = {}) {}

  async validate(objects: readonly K8sObject[]): Promise<Finding[]> {
    const findings: Finding[] = [];
    for (const obj of objects) findings.push(...(await this.validateOne(obj)));
    return findings;
  }

  private async validateOne(obj: K8sObject): Promise<Finding[]> {
    const object = describe(obj);
    const spec = findKind(obj.apiVersion, obj.kind);
    this.custom ??= new CustomKindValidator();
    const custom = spec ? undefined : this.custom.find(obj.apiVersion, obj.kind);
    if (custom) return this.custom.validate(obj, custom);
    if (!spec) {
      return [
        {
          object,
          rule: 'unknown-kind',
          path: '',
          message: `apiVersion ${JSON.stringify(obj.apiVersion)} kind ${JSON.stringify(obj.kind)} is not a kind of the supported Kubernetes API (packages/k8s-check/src/kinds.ts) nor of a vendored CRD (packages/k8s-check/crds/)`,
        },
      ];
    }
    const findings: Finding[] = [];
    if (typeof obj.metadata?.name !== 'string' || obj.metadata.name === '') {
      findings.push({ object, rule: 'schema', path: 'metadata.name', message: 'is required' });
    }
    const key = `${spec.apiVersion}/${spec.kind}`;
    let model = this.models.get(key);
    if (!model) {
      model = loadModel(spec);
      this.models.set(key, model);
    }
    const Model = await model;
    try {
      new Model(obj).validate();
    } catch (err) {
      const errors = (err as { errors?: AjvLikeError[] }).errors;
      if (!Array.isArray(errors)) throw err;
      for (const e of errors) {
        const missing = typeof e.params?.missingProperty === 'string' ? e.params.missingProperty : undefined;
        const where = dotted(e.instancePath ?? '');
        findings.push({
          object,
          rule: 'schema',
          path: missing ? (where === '' ? missing : `${where}.${missing}`) : where,
          message: missing ? 'is required' : (e.message ?? 'is invalid'),
        });
      }
    }
    if (this.options.unknownFields !== false) {
      this.strict ??= new UnknownFieldChecker(KINDS, path.resolve(__dirname, '..'));
      for (const field of this.strict.unknownFields(spec.apiVersion, spec.kind, obj)) {
        findings.push({ object, rule: 'unknown-field', path: field, message: `unknown field in ${spec.kind}` });
      }
    }
    return findings;
  }
}
