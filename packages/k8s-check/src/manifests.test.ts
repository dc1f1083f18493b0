import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { parse, parseAllDocuments } from 'yaml';
import { gatewayEnvNames } from '../../../services/gateway/src/config';
import { historyEnvSchema } from '../../../services/history/src/config';
import { recorderEnvNames } from '../../../services/recorder/src/config';
import { RECONCILE_STOP_WAIT_MS } from '../../../services/recorder/src/venues/venue';
import { replayEnvSchema } from '../../../services/replay/src/config';

/**
 * The manifests agree with the services: every variable they set is one the deployable reads (a typo such as
 * GATEWAY_HOTS would leave the service on 127.0.0.1, unreachable by its probes), the listening port matches the
 * container port, the drain fits in the grace period, the heap fits in the memory limit, and the alerts name metrics
 * the code defines. Reads the sources directly: needs neither kubectl nor a build.
 */
const root = path.join(__dirname, '..', '..', '..');
const k8s = path.join(root, 'infra', 'k8s');
const keysOf = (schema: unknown) => Object.keys((schema as { shape: Record<string, unknown> }).shape);

const known: Record<string, Set<string>> = {
  gateway: new Set([...gatewayEnvNames(), 'NODE_OPTIONS']),
  history: new Set([...keysOf(historyEnvSchema), 'NODE_OPTIONS']),
  recorder: new Set([...recorderEnvNames(), 'NODE_OPTIONS']),
  replay: new Set([...keysOf(replayEnvSchema), 'NODE_OPTIONS']),
};
const HOST_PORT: Record<string, [string, string]> = {
  gateway: ['GATEWAY_HOST', 'GATEWAY_PORT'],
  history: ['HISTORY_HOST', 'HISTORY_PORT'],
  recorder: ['RECORDER_HOST', 'RECORDER_PORT'],
  replay: ['REPLAY_HOST', 'REPLAY_PORT'],
};
const services = Object.keys(known);

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function envFile(service: string): Map<string, string> {
  const text = readFileSync(path.join(k8s, 'base', service, 'config.env'), 'utf8');
  const entries = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line): [string, string] => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return new Map(entries);
}

function workload(service: string): Obj {
  const dir = path.join(k8s, 'base', service);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as Obj;
      if (obj.kind === 'Deployment' || obj.kind === 'StatefulSet') return obj;
    }
  }
  throw new Error(`no workload in base/${service}`);
}

const bytes = (quantity: string): number => {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1) * 1024 * 1024;
};

describe.each(services)('base/%s', (service) => {
  const env = envFile(service);
  const spec = workload(service).spec.template.spec as Obj;
  const container = spec.containers[0] as Obj;

  it('runs the image built for this deployable', () => {
    expect(container.image).toMatch(new RegExp(`^ghcr\\.io/depthgate/depthgate-${service}:`));
  });

  it('sets only variables the deployable reads', () => {
    const names = [...env.keys(), ...(container.env as Obj[]).map((e) => e.name as string)];
    expect(names.filter((n) => !known[service]?.has(n))).toEqual([]);
  });

  it('listens on all interfaces, on the container port its probes use', () => {
    const [host, port] = HOST_PORT[service] ?? [];
    expect(env.get(host ?? '')).toBe('0.0.0.0');
    const http = (container.ports as Obj[]).find((p) => p.name === 'http');
    expect(Number(env.get(port ?? ''))).toBe(http?.containerPort);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      expect(container[probe].httpGet.port).toBe('http');
    }
    expect(container.readinessProbe.httpGet.path).toBe('/ready');
    expect(container.livenessProbe.httpGet.path).toBe('/health');
  });

  it('drains within the termination grace period', () => {
    // The recorder serves no traffic: its HTTP drain is fixed at 2 s (services/recorder/src/main.ts), it waits for a
    // reconciliation read in flight for at most RECONCILE_STOP_WAIT_MS (2 s, services/recorder/src/venues/venue.ts), then
    // it flushes its buffer for at most RECORDER_SHUTDOWN_FLUSH_MS (default 20 s) before spooling the rest.
    const drainMs =
      service === 'recorder'
        ? 2000 + RECONCILE_STOP_WAIT_MS + Number(env.get('RECORDER_SHUTDOWN_FLUSH_MS') ?? 20_000)
        : Number(env.get('SHUTDOWN_DELAY_MS') ?? 0) + Number(env.get('DRAIN_TIMEOUT_MS') ?? 15_000);
    expect(drainMs + 5000).toBeLessThanOrEqual(spec.terminationGracePeriodSeconds * 1000);
  });

  it('keeps the JavaScript heap below the memory limit', () => {
    const options = (container.env as Obj[]).find((e) => e.name === 'NODE_OPTIONS')?.value as string;
    const heapMi = Number(/--max-old-space-size=(\d+)/.exec(options)?.[1]);
    const limit = bytes(container.resources.limits.memory);
    expect(heapMi * 1024 * 1024).toBeLessThanOrEqual(limit * 0.8);
    expect(heapMi * 1024 * 1024).toBeGreaterThanOrEqual(limit * 0.5);
  });
});

describe('recorder variables', () => {
  // Besides the schema check above: each variable the manifests set appears in the recorder's sources, so a renamed
  // variable fails here instead of in the cluster.
  it('are named in the sources the recorder is built from', () => {
    const set = [...envFile('recorder').keys(), 'CLICKHOUSE_URL'];
    // Its own, and the store's (the CLICKHOUSE_* settings are defined there).
    const dirs = [path.join(root, 'services', 'recorder', 'src'), path.join(root, 'packages', 'history-store', 'src')];
    const sources = dirs
      .flatMap((dir) =>
        readdirSync(dir, { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
          .map((f) => readFileSync(path.join(dir, f), 'utf8')),
      )
      .join('\n');
    expect(set.filter((name) => !sources.includes(name))).toEqual([]);
  });
});

describe('overlays', () => {
  const overlays = readdirSync(path.join(k8s, 'overlays'));

  it.each(overlays)('%s merges only known variables into the ConfigMaps', (overlay) => {
    const kustomization = parse(readFileSync(path.join(k8s, 'overlays', overlay, 'kustomization.yaml'), 'utf8')) as Obj;
    const unknown: string[] = [];
    for (const generator of (kustomization.configMapGenerator ?? []) as Obj[]) {
      const service = String(generator.name).replace(/-config$/, '');
      for (const literal of (generator.literals ?? []) as string[]) {
        const name = literal.slice(0, literal.indexOf('='));
        if (!known[service]?.has(name)) unknown.push(`${generator.name}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});

/** Series that come from Prometheus itself, kube-state-metrics and the kubelet, not from depthgate. */
const EXTERNAL = new Set([
  'up',
  'kube_deployment_status_replicas_available',
  'kube_statefulset_status_replicas_ready',
  'kubelet_volume_stats_available_bytes',
  'kubelet_volume_stats_capacity_bytes',
]);
/** prom-client's default metrics (service-kit's registry collects them): `process_…`, `nodejs_…`. */
const PROM_CLIENT_DEFAULT = /^(process|nodejs)_/;
const PROMQL_WORDS = new Set(['by', 'without', 'and', 'or', 'unless', 'on', 'ignoring', 'group_left', 'group_right']);
const monitoring = path.join(k8s, 'components', 'monitoring');

function alertExprs(): [string, string][] {
  const rule = parse(readFileSync(path.join(monitoring, 'prometheusrule.yaml'), 'utf8')) as Obj;
  return (rule.spec.groups as Obj[]).flatMap((g) =>
    (g.rules as Obj[]).map((r): [string, string] => [String(r.alert), String(r.expr)]),
  );
}

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string; refId: string; datasource?: { uid: string } }[];
}
const dashboard = () =>
  JSON.parse(readFileSync(path.join(monitoring, 'dashboards', 'depthgate.json'), 'utf8')) as {
    uid: string;
    panels: Panel[];
    templating: { list: { name: string }[] };
  };

function dashboardExprs(): [string, string][] {
  return dashboard().panels.flatMap((p) =>
    (p.targets ?? []).map((t): [string, string] => [`${p.title} ${t.refId}`, t.expr]),
  );
}

function sourcesDefining(): string {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'dist') walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        texts.push(readFileSync(full, 'utf8'));
      }
    }
  };
  for (const dir of ['packages', 'services']) walk(path.join(root, dir));
  return texts.join('\n');
}

function syntaxErrors(exprs: [string, string][]): string[] {
  const invalid: string[] = [];
  for (const [name, expr] of exprs) {
    let error: number | undefined;
    promql.parse(expr).iterate({
      enter: (node) => {
        if (node.type.isError) error ??= node.from;
      },
    });
    if (error !== undefined) invalid.push(`${name}: syntax error at ${error}: ${expr.slice(error, error + 30)}`);
  }
  return invalid;
}

/** Metric names the expressions use that neither the services' sources nor Prometheus' ecosystem define. */
function undefinedMetrics(exprs: string[]): { names: Set<string>; missing: string[] } {
  // Drop label matchers, ranges and grouping clauses; what remains that is not a function call or a keyword is a
  // metric name.
  const names = new Set<string>();
  for (const expr of exprs) {
    const bare = expr
      .replace(/\{[^}]*\}/g, ' ')
      .replace(/\[[^\]]*\]/g, ' ')
      .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
    for (const m of bare.matchAll(/\b([a-z_][a-z0-9_]*)\b(?!\s*\()/g)) {
      if (!PROMQL_WORDS.has(m[1] ?? '')) names.add(m[1] ?? '');
    }
  }
  const sources = sourcesDefining();
  const missing = [...names]
    .map((n) => n.replace(/_(bucket|count|sum)$/, ''))
    .filter((n) => !EXTERNAL.has(n) && !PROM_CLIENT_DEFAULT.test(n) && !sources.includes(`'${n}'`));
  return { names, missing };
}

describe('alert rules', () => {
  it('are valid PromQL', () => {
    expect(syntaxErrors(alertExprs())).toEqual([]);
  });

  it('name metrics the services define', () => {
    const { names, missing } = undefinedMetrics(alertExprs().map(([, expr]) => expr));
    expect(names.size).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it('are each listed in docs/operations.md', () => {
    const docs = readFileSync(path.join(root, 'docs', 'operations.md'), 'utf8');
    expect(
      alertExprs()
        .filter(([alert]) => !docs.includes(`\`${alert}\``))
        .map(([alert]) => alert),
    ).toEqual([]);
  });
});

describe('the Grafana dashboard', () => {
  it('is valid PromQL, panel by panel', () => {
    expect(syntaxErrors(dashboardExprs())).toEqual([]);
  });

  it('names metrics the services define', () => {
    const { names, missing } = undefinedMetrics(dashboardExprs().map(([, expr]) => expr));
    expect(names.size).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it('has unique panel ids, a query in every graph, and every query on the chosen data source and namespaces', () => {
    const d = dashboard();
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(d.templating.list.map((v) => v.name)).toEqual(['datasource', 'namespace']);
    const graphs = d.panels.filter((p) => p.type !== 'row');
    expect(graphs.filter((p) => (p.targets ?? []).length === 0).map((p) => p.title)).toEqual([]);
    const queries = graphs.flatMap((p) => (p.targets ?? []).map((t) => ({ p, t })));
    expect(
      queries
        .filter(({ p, t }) => p.datasource?.uid !== '${datasource}' || t.datasource?.uid !== '${datasource}')
        .map(({ p }) => p.title),
    ).toEqual([]);
    // Every selector is depthgate's own series in the chosen namespaces.
    const selectors = queries.flatMap(({ t }) => [...t.expr.matchAll(/\{([^}]*)\}/g)].map((m) => m[1] ?? ''));
    expect(selectors.length).toBeGreaterThan(graphs.length);
    expect(
      selectors.filter((sel) => !sel.includes('part_of="depthgate"') || !sel.includes('namespace=~"$namespace"')),
    ).toEqual([]);
  });
});
