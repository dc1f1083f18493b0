#!/usr/bin/env node
/**
 * Validates rendered Kubernetes manifests offline: schemas of their kinds, unknown fields, and depthgate's
 * deployment policy (policy.ts). Run by infra/k8s/validate.sh on every overlay it renders.
 *
 *   node packages/k8s-check/dist/cli.js FILE.yaml…       exit 0: no finding; 1: findings (listed); 2: usage
 *   node packages/k8s-check/dist/cli.js --json FILE…      findings as one JSON array on stdout
 */
import { readFileSync } from 'node:fs';
import { embeddedObjects } from './crds';
import { formatFinding, type Finding } from './findings';
import { parseManifests } from './load';
import { checkPolicy } from './policy';
import { SchemaValidator } from './schema';

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const files = argv.filter((a) => !a.startsWith('--'));
  if (files.length === 0 || argv.includes('--help')) {
    console.error('usage: k8s-check [--json] FILE.yaml…  (rendered manifests, e.g. kubectl kustomize output)');
    return 2;
  }
  const validator = new SchemaValidator();
  const findings: Finding[] = [];
  let count = 0;
  for (const file of files) {
    const { objects: parsed, findings: parseFindings } = parseManifests(readFileSync(file, 'utf8'), file);
    count += parsed.length;
    // An operator's resource is checked with the pods, claims and services its templates become.
    const objects = [...parsed, ...parsed.flatMap(embeddedObjects)];
    findings.push(...parseFindings, ...(await validator.validate(objects)), ...checkPolicy(objects));
  }
  if (json) {
    console.log(JSON.stringify(findings));
  } else {
    for (const f of findings) console.error(formatFinding(f));
    console.error(
      `${count} objects in ${files.length} file(s): ${findings.length === 0 ? 'no problems' : `${findings.length} problem(s)`}`,
    );
  }
  return findings.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
