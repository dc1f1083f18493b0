// What the contract suite runs: a table per library of every read-only method, each called unchanged through the
// library, directly against the simulator and through the gateway, and what is checked of each call.
import type { RecordedRequest, Simulator } from '@depthgate/venue-sim';
import type { Catalogue } from './catalogue.ts';
import type { DeclaredTypes, TypeRef } from './declared-types.ts';

/** `direct`: the library talks to the simulator with the simulator's test credentials; `gateway`: to depthgate. */
export type Mode = 'direct' | 'gateway';
export const MODES: readonly Mode[] = ['direct', 'gateway'];

export interface GatewayAccess {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** A depthgate API key. */
  key: string;
  /** GATEWAY_BASE_DOMAIN: `{platform}.{baseDomain}` reaches a platform at its own root. */
  baseDomain: string;
}

export interface Env {
  sim: Simulator;
  gateway: GatewayAccess;
  catalogue: Catalogue;
}

/**
 * `public`: the platform serves it without a signature; `private`: it needs the account's signature, which the
 * library makes directly and the gateway makes on its behalf (the library then holds no upstream credentials).
 */
export type Access = 'public' | 'private';

export interface MethodSpec<C> {
  /** As a user writes it: `MarketApi.getMarkets`, `markets.book`, `fetchTicker`. */
  name: string;
  access: Access;
  /** Calls the method with arguments from the simulator's catalogue; resolves to the value to check. */
  call(client: C, catalogue: Catalogue): Promise<unknown>;
  /** The type the value is checked against. Absent: the library's declaration of the method (`declared`). */
  type?: TypeRef;
  /** Why `type` is not the library's declaration (the library declares `any`, or the platform's docs disagree). */
  typeNote?: string;
  /** The part of the value the type is checked against, when not all of it (the note says why). */
  select?(value: unknown): unknown;
  /** Why an answer of nothing (undefined) is right here: e.g. the account holds no such position. */
  noneOk?: string;
  /** Further checks of the value (problems, empty when fine): lists the simulator fills are not empty, etc. */
  expect?(value: unknown, catalogue: Catalogue): string[];
  /**
   * A read of one object of the simulator's (empty) account by id, when the account has none: the call is still
   * made, signed, and the platform's 404 is the expected answer. Returns whether the object is missing.
   */
  absent?(catalogue: Catalogue): boolean;
  /**
   * Why this read cannot work for a platform-side reason (an exception): it is still called and reported, and the
   * suite fails if it starts to work, so that the exception goes.
   */
  exception?: string;
}

export interface LibrarySpec<C> {
  /** Row label in the report: `kalshi-typescript`, `ccxt prediction.kalshi`. */
  label: string;
  /** npm package and version, as pinned. */
  pkg: string;
  /** The declared type of a method of this library (when the spec does not name one). */
  declared(method: string): TypeRef | undefined;
  client(mode: Mode, env: Env): C;
  /** Wraps each call in a mode: process-wide settings a user of this library would make (polymarket-us). */
  around?<T>(mode: Mode, env: Env, run: () => Promise<T>): Promise<T>;
  methods: readonly MethodSpec<C>[];
  /** The library's other methods, each with why it is not called (state-changing, local, outside the scope). */
  notCalled: Readonly<Record<string, string>>;
}

export type Outcome = 'pass' | 'absent' | 'fail';

export interface Result {
  library: string;
  method: string;
  mode: Mode;
  access: Access;
  outcome: Outcome;
  exception?: string;
  /** `declared`, or `documented` with the reason. */
  checkedAgainst: string;
  problems: string[];
  /** The requests the simulator received for the call: `GET /trade-api/v2/markets 200 valid`. */
  requests: string[];
}

const CALL_TIMEOUT_MS = 20_000;
const GATEWAY_USER_AGENT = 'depthgate-gateway/1.0';

/** Runs one method in one mode and judges it (never throws: a failure is a result). */
export async function runMethod<C>(
  lib: LibrarySpec<C>,
  spec: MethodSpec<C>,
  client: C,
  mode: Mode,
  env: Env,
  types: DeclaredTypes,
): Promise<Result> {
  const { sim, catalogue } = env;
  const typeRef = spec.type ?? lib.declared(spec.name);
  const checkedAgainst = spec.typeNote ? `${spec.type ? 'documented' : 'declared'}: ${spec.typeNote}` : 'declared';
  const absent = spec.absent?.(catalogue) ?? false;
  const problems: string[] = [];

  sim.clearRequests();
  let value: unknown;
  let error: unknown;
  try {
    const run = () => withTimeout(spec.call(client, catalogue), CALL_TIMEOUT_MS);
    value = await (lib.around ? lib.around(mode, env, run) : run());
  } catch (err) {
    error = err;
  }
  const requests = sim.requests();

  // The requests the call made, as the simulator received them: answered, signed as the platform requires, and
  // (through the gateway) sent by the gateway.
  const unexpected = requests.filter((r) => !(r.status >= 200 && r.status < 300) && !(absent && r.status === 404));
  for (const r of unexpected) problems.push(`${r.method} ${r.path} answered ${r.status}`);
  if (absent && !requests.some((r) => r.status === 404))
    problems.push('expected the platform’s 404 for a missing object');
  if (requests.length === 0) problems.push('no request reached the simulator');
  // A private read is signed (a library may first load public data, unsigned); nothing is ever signed wrongly.
  // (The simulator verifies signatures on the routes it knows: an unknown route's 404 says enough.)
  const verified = requests.some((r) => r.auth === 'valid');
  if (spec.access === 'private' && requests.length > 0 && !verified && unexpected.length === 0) {
    problems.push(absent ? 'the 404 came without the signature being verified (no such route?)' : 'no signed request');
  }
  for (const r of requests) {
    if (r.auth === 'invalid' || r.auth === 'absent') problems.push(`${r.method} ${r.path} signature ${r.auth}`);
    if (mode === 'gateway' && r.headers['user-agent'] !== GATEWAY_USER_AGENT) {
      problems.push(`${r.method} ${r.path} reached the simulator without the gateway`);
    }
  }
  // A call that failed on an answer listed above is explained by it; otherwise the error is the explanation.
  const answered404 = absent && requests.some((r) => r.status === 404);
  if (error !== undefined && unexpected.length === 0 && !answered404)
    problems.push(`threw ${describeError(error, env)}`);

  const none = value === undefined && spec.noneOk !== undefined;
  if (error === undefined && !absent && !none) {
    if (typeRef) {
      try {
        const type = types.resolve(typeRef);
        const checked = spec.select ? spec.select(value) : value;
        for (const p of types.check(type, checked)) problems.push(`${p.at}: ${p.message}`);
      } catch (err) {
        problems.push(`declared type: ${describeError(err, env)}`);
      }
    }
    if (spec.expect) problems.push(...spec.expect(value, catalogue));
  }

  const outcome: Outcome = problems.length > 0 ? 'fail' : absent ? 'absent' : 'pass';
  return {
    library: lib.label,
    method: spec.name,
    mode,
    access: spec.access,
    outcome,
    ...(spec.exception ? { exception: spec.exception } : {}),
    checkedAgainst,
    problems: [...new Set(problems)],
    requests: requests.map(requestLine),
  };
}

function requestLine(r: RecordedRequest): string {
  return `${r.method} ${r.path} ${r.status} ${r.auth}`;
}

/** An error as one line, without the run's ports (the report is the same on every run). */
export function describeError(err: unknown, env: Pick<Env, 'sim' | 'gateway'>): string {
  const name = err instanceof Error ? err.constructor.name : typeof err;
  const message = err instanceof Error ? err.message : String(err);
  let line = `${name}: ${message.split('\n')[0] ?? ''}`;
  for (const [id, url] of Object.entries(env.sim.urls)) {
    if (url) line = line.split(new URL(url).origin).join(`<${id}>`);
  }
  line = line
    .split(env.gateway.url)
    .join('<gateway>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A shape of documented.d.ts (the platforms' documented answers, where the libraries declare none or contradict). */
export function documented(name: string): TypeRef {
  return { module: new URL('./documented.d.ts', import.meta.url).pathname, path: [name] };
}

/** Reasons for `notCalled`, shared by the tables. */
export const CHANGES_STATE = 'changes state (creates, amends, cancels or deletes)';
export const LOCAL = "no request: computed locally, or the client's own plumbing";

// Helpers the tables use for `expect`.

/** The value at a dotted path (`markets`, `orderbook_fp.yes_dollars`). */
export function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The lists at these paths (`''` for the value itself) hold at least one element. */
export function nonEmpty(...paths: string[]): (value: unknown) => string[] {
  return (value) =>
    paths.flatMap((path) => {
      const list = path === '' ? value : at(value, path);
      const size = Array.isArray(list) ? list.length : list && typeof list === 'object' ? Object.keys(list).length : 0;
      return size > 0 ? [] : [`${path === '' ? 'the answer' : path} is empty; the simulator's catalogue has some`];
    });
}

/** Catalogue entries a call cannot do without (an object the simulator should list): throws when it lists none. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the simulator's catalogue lists no ${what}`);
  return value;
}

/** Fields that must hold a value (not undefined, not null): what a loosely typed library's parsers filled in. */
export function present(...paths: string[]): (value: unknown) => string[] {
  return (value) =>
    paths.filter((p) => at(value, p) === undefined || at(value, p) === null).map((p) => `${p} is missing`);
}

export function all(...checks: ((value: unknown, catalogue: Catalogue) => string[])[]) {
  return (value: unknown, catalogue: Catalogue) => checks.flatMap((c) => c(value, catalogue));
}
