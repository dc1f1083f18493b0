export { checkPolicy, parseImage } from './policy';
export { SchemaValidator } from './schema';
export { parseManifests } from './load';
export { KINDS, findKind, type KindSpec } from './kinds';
export { formatFinding, type Finding, type K8sObject, type Rule } from './findings';
export { CustomKindValidator, embeddedObjects, loadCustomKinds, type CustomKind } from './crds';
