import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * Static checks of the images' Dockerfiles (no Docker engine is needed; .github/workflows/images.yml builds them):
 * the base is pinned by version and digest and the same in every image, the runtime stage gets the production
 * deployment only and runs as a numeric non-root user, and no secret-looking value is baked in.
 */
const root = path.join(__dirname, '..', '..', '..');
/** Every deployable: a folder of services/ with a Dockerfile. */
const services = readdirSync(path.join(root, 'services')).filter((s) =>
  existsSync(path.join(root, 'services', s, 'Dockerfile')),
);
const read = (service: string) => readFileSync(path.join(root, 'services', service, 'Dockerfile'), 'utf8');
const nodeImage = (text: string) => /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1];

describe.each(services)('services/%s/Dockerfile', (service) => {
  const text = read(service);
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1] ?? '';

  it('pins the Node slim base by exact version and digest', () => {
    expect(nodeImage(text)).toMatch(/^node:24\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/);
    expect(stages.every((s) => s.startsWith('${NODE_IMAGE} AS '))).toBe(true);
  });

  it('builds with the lockfile and deploys production dependencies only', () => {
    expect(text).toContain('pnpm fetch --frozen-lockfile');
    expect(text).toContain('pnpm install --frozen-lockfile --offline');
    expect(text).toContain(`--filter @depthgate/${service} --prod deploy`);
    expect(runtime).toMatch(/^COPY --from=build \/out\/ \/app\/$/m);
    expect(runtime).not.toMatch(/^RUN /m);
  });

  it('runs as a numeric non-root user with NODE_ENV=production', () => {
    const user = /^USER (\d+):(\d+)$/m.exec(runtime);
    expect(user).not.toBeNull();
    expect(Number(user?.[1])).toBeGreaterThan(0);
    expect(runtime).toMatch(/NODE_ENV=production/);
    expect(runtime).toMatch(/_HOST=0\.0\.0\.0/);
  });

  it('bakes in no secret', () => {
    expect(text).not.toMatch(/^(ENV|ARG)\b.*(SECRET|PASSWORD|PRIVATE_KEY|TOKEN|PASSPHRASE|REDIS_URL|CLICKHOUSE_URL)/im);
    expect(text).not.toMatch(/--mount=type=secret|COPY .*\.(pem|key|env)\b/);
  });
});

it('every image is built on the same Node base (one NODE_IMAGE in every Dockerfile)', () => {
  expect(services.length).toBeGreaterThanOrEqual(4);
  const bases = new Set(services.map((s) => nodeImage(read(s))));
  expect([...bases]).toHaveLength(1);
});

describe('services/history/Dockerfile', () => {
  // The history service runs on jemalloc (docs/benchmarks.md, "Book, bulk streams and cursors"), copied from the build
  // stage so that the runtime stage runs no package manager; bench/history/stack.sh reads MALLOC_CONF from here.
  const stages = read('history')
    .split(/^FROM /m)
    .slice(1);
  const [build, runtime] = [stages[0] ?? '', stages[stages.length - 1] ?? ''];

  it('preloads jemalloc from a folder the runtime stage copies from the build stage', () => {
    const preload = /^\s*LD_PRELOAD=(\S+)\/libjemalloc\.so\.2\b/m.exec(runtime)?.[1];
    expect(preload).toBeDefined();
    const copy = new RegExp(`^COPY --from=build (\\S+) ${preload}/$`, 'm').exec(runtime);
    expect(copy).not.toBeNull();
    expect(build).toContain(`test -s ${copy?.[1]}libjemalloc.so.2`);
    expect(runtime).toMatch(/^\s*MALLOC_CONF=\S*dirty_decay_ms:\d+/m);
  });
});

describe('images', () => {
  it('are one per deployable, each built by the image workflow', () => {
    expect(services.sort()).toEqual(['gateway', 'history', 'recorder', 'replay']);
    const workflow = parse(readFileSync(path.join(root, '.github', 'workflows', 'images.yml'), 'utf8')) as {
      jobs: { image: { strategy: { matrix: { service: string[] } } } };
    };
    expect([...workflow.jobs.image.strategy.matrix.service].sort()).toEqual(services);
  });

  it('share one base image', () => {
    expect(new Set(services.map((s) => nodeImage(read(s)))).size).toBe(1);
  });

  it('leave local installs, builds, data and secrets out of the build context', () => {
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', '.dev', '.tools', '**/node_modules', '**/dist', '.env', '.env.*']) {
      expect(ignore).toContain(entry);
    }
  });
});
