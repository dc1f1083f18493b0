import { parseAllDocuments } from 'yaml';
import type { Finding, K8sObject } from './findings';

/** Parses a multi-document YAML stream (e.g. `kubectl kustomize` output) into objects; empty documents are skipped. */
export function parseManifests(text: string, source: string): { objects: K8sObject[]; findings: Finding[] } {
  const objects: K8sObject[] = [];
  const findings: Finding[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors)
        findings.push({ object: source, rule: 'parse', path: `document ${i + 1}`, message: e.message });
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || Array.isArray(value)) {
      findings.push({ object: source, rule: 'parse', path: `document ${i + 1}`, message: 'is not an object' });
      return;
    }
    objects.push(value as K8sObject);
  });
  return { objects, findings };
}
