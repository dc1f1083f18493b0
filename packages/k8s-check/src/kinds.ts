/**
 * The kinds depthgate's manifests may contain, each with the model (schema) that validates it.
 *
 * Schemas: `kubernetes-models` 5.1.0, generated from the Kubernetes v1.36.0 OpenAPI document (merged with older
 * documents so removed APIs still have models), and `@kubernetes-models/prometheus-operator` 6.0.0 for the
 * Prometheus Operator CRDs. Both are pinned exactly in package.json and installed from the lockfile: validation
 * needs no network. Because the models keep removed APIs, this list is also the allow-list of API versions: only
 * versions served by every Kubernetes release depthgate supports (1.29 and later) are here, so an object written
 * for a removed API (policy/v1beta1, autoscaling/v2beta2, …) is reported as an unknown kind.
 */
export interface KindSpec {
  apiVersion: string;
  kind: string;
  /** ES module exporting the model class named `kind` and its data interface `I<kind>`. */
  module: string;
}

const core = (kind: string): KindSpec => ({ apiVersion: 'v1', kind, module: `kubernetes-models/v1/${kind}` });
const grouped = (apiVersion: string, kind: string): KindSpec => ({
  apiVersion,
  kind,
  module: `kubernetes-models/${apiVersion}/${kind}`,
});
const monitoring = (kind: string): KindSpec => ({
  apiVersion: 'monitoring.coreos.com/v1',
  kind,
  module: `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}`,
});

export const KINDS: readonly KindSpec[] = [
  core('Namespace'),
  core('ConfigMap'),
  core('Secret'),
  core('Service'),
  core('ServiceAccount'),
  core('PersistentVolumeClaim'),
  core('Pod'),
  grouped('apps/v1', 'Deployment'),
  grouped('apps/v1', 'StatefulSet'),
  grouped('apps/v1', 'DaemonSet'),
  grouped('batch/v1', 'Job'),
  grouped('batch/v1', 'CronJob'),
  grouped('autoscaling/v2', 'HorizontalPodAutoscaler'),
  grouped('policy/v1', 'PodDisruptionBudget'),
  grouped('networking.k8s.io/v1', 'NetworkPolicy'),
  grouped('networking.k8s.io/v1', 'Ingress'),
  grouped('rbac.authorization.k8s.io/v1', 'Role'),
  grouped('rbac.authorization.k8s.io/v1', 'RoleBinding'),
  monitoring('ServiceMonitor'),
  monitoring('PodMonitor'),
  monitoring('PrometheusRule'),
];

export function findKind(apiVersion: unknown, kind: unknown): KindSpec | undefined {
  return KINDS.find((k) => k.apiVersion === apiVersion && k.kind === kind);
}
