/**
 * The environment of the platforms, derived from their descriptors: each deployable asks for the parts it uses
 * (REST hosts, feeds, credentials, settings) of the platforms it talks to, and gets them parsed, validated and
 * resolved — URLs, built credentials, settings, the signer, the default budget. No deployable lists a platform's
 * variables itself.
 */
import { z } from 'zod';
import {
  type envUrl,
  envHttpUrl,
  envOptionalString,
  envWsUrl,
  group,
  parseEnv,
  ConfigError,
  secret,
} from '@depthgate/service-kit';
import type {
  Budget,
  CredentialGroups,
  PlatformDescriptor,
  ResolvedCredentials,
  SettingsOf,
  UrlSpec,
} from './descriptor';
import type { Signer } from './signing';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds descriptors of any credential and setting types
export type AnyDescriptor = PlatformDescriptor<any, any, string, any, any, any>;
export type Registry = Readonly<Record<string, AnyDescriptor>>;

/** Which parts of a platform a deployable configures. */
export interface EnvParts {
  /** REST hosts: all of them, or only each platform's `main` host. */
  hosts?: boolean | 'main';
  feeds?: boolean;
  credentials?: boolean;
  settings?: boolean;
}

export const ALL_PARTS: Required<EnvParts> = { hosts: true, feeds: true, credentials: true, settings: true };

type UrlsOf<T> =
  T extends Readonly<Record<string, UrlSpec>> ? { readonly [K in keyof T]: string } : Record<string, never>;

/** One platform as a deployable configured it. */
export interface ResolvedPlatform<D extends AnyDescriptor = AnyDescriptor> {
  readonly descriptor: D;
  /** Base URL of each REST host (no trailing slash); empty when the deployable did not ask for hosts. */
  readonly urls: UrlsOf<D['hosts']>;
  /** URL of each feed; empty when not asked for. */
  readonly feeds: UrlsOf<D['feeds']>;
  readonly credentials: D extends PlatformDescriptor<infer G, infer _S> ? ResolvedCredentials<G> : never;
  readonly settings: D extends PlatformDescriptor<infer _G, infer S> ? SettingsOf<S> : never;
  /** Built from the credentials when they are configured. */
  readonly signer: Signer | undefined;
}

export type ResolvedPlatforms<R extends Registry> = { readonly [K in keyof R]: ResolvedPlatform<R[K]> };

type Shape = Record<string, z.ZodType>;

function urlShape(specs: Readonly<Record<string, UrlSpec>> | undefined, url: typeof envUrl): Shape {
  const shape: Shape = {};
  for (const spec of Object.values(specs ?? {})) shape[spec.env] = url(spec.default);
  return shape;
}

function hostsOf(d: AnyDescriptor, parts: EnvParts): Readonly<Record<string, UrlSpec>> {
  const hosts = d.hosts as Readonly<Record<string, UrlSpec>>;
  return parts.hosts === 'main' ? { main: hosts.main as UrlSpec } : hosts;
}

/** The zod shape of one platform's variables for the parts asked for. */
export function descriptorEnvShape(d: AnyDescriptor, parts: EnvParts): Shape {
  const shape: Shape = {};
  // A REST host URL that is not a base HTTP URL would fail (or reach another path) at every request.
  if (parts.hosts) Object.assign(shape, urlShape(hostsOf(d, parts), envHttpUrl));
  // A feed URL the WebSocket library refuses would otherwise be retried (and logged) forever.
  if (parts.feeds) Object.assign(shape, urlShape(d.feeds, envWsUrl));
  if (parts.credentials) {
    for (const g of Object.values(d.credentials as CredentialGroups)) {
      for (const v of g.vars) {
        shape[v.env] = envOptionalString();
        if (v.secret) shape[`${v.env}_FILE`] = envOptionalString();
      }
    }
  }
  if (parts.settings) Object.assign(shape, d.settings);
  return shape;
}

/** The zod shape of every platform's variables in `registry` for the parts asked for. */
export function platformEnvShape(registry: Registry, parts: EnvParts): Shape {
  const shape: Shape = {};
  for (const d of Object.values(registry)) Object.assign(shape, descriptorEnvShape(d, parts));
  return shape;
}

/** Every variable name a deployable reads for these platforms (docs/configuration.md completeness, simulator env files). */
export function platformEnvNames(registry: Registry, parts: EnvParts): string[] {
  return Object.keys(platformEnvShape(registry, parts));
}

function urls(
  specs: Readonly<Record<string, UrlSpec>> | undefined,
  env: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(specs ?? {})) out[name] = env[spec.env] as string;
  return out;
}

/**
 * Parses and resolves the platforms' variables out of `env`: URLs, credentials (each group all or none, secrets
 * inline or from `_FILE`, each validated by its descriptor), settings, and the signer. Every problem is collected in
 * `issues` (so a start-up lists them all); the platforms are returned as far as they could be resolved.
 */
export function resolvePlatforms<R extends Registry>(
  env: Record<string, string | undefined>,
  registry: R,
  parts: EnvParts,
  issues: string[],
): ResolvedPlatforms<R> {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = parseEnv(z.object(platformEnvShape(registry, parts)), env) as Record<string, unknown>;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
    return {} as ResolvedPlatforms<R>;
  }
  const out: Record<string, ResolvedPlatform> = {};
  for (const [key, d] of Object.entries(registry)) {
    const credentials: Record<string, unknown> = {};
    if (parts.credentials) {
      for (const [id, g] of Object.entries(d.credentials as CredentialGroups)) {
        const values: Record<string, string | undefined> = {};
        for (const v of g.vars) values[v.env] = v.secret ? secret(parsed, v.env, issues) : (parsed[v.env] as string);
        const built = group(
          g.name,
          values,
          (complete) => {
            try {
              return g.build(complete);
            } catch (err) {
              issues.push(`${g.name} credentials: ${(err as Error).message}`);
              return undefined;
            }
          },
          issues,
        );
        if (built !== undefined) credentials[id] = built;
      }
    }
    // Settings the deployable does not configure keep their defaults.
    const settings: Record<string, unknown> = parts.settings
      ? Object.fromEntries(Object.keys(d.settings).map((name) => [name, parsed[name]]))
      : parseEnv(z.object(d.settings), {});
    let signer: Signer | undefined;
    try {
      signer = parts.credentials ? d.signer?.(credentials, settings) : undefined;
    } catch (err) {
      issues.push(`${d.title} signer: ${(err as Error).message}`);
    }
    out[key] = {
      descriptor: d,
      urls: parts.hosts ? urls(hostsOf(d, parts), parsed) : {},
      feeds: parts.feeds ? urls(d.feeds, parsed) : {},
      credentials,
      settings,
      signer,
    } as ResolvedPlatform;
  }
  return out as ResolvedPlatforms<R>;
}

/** The documented budget of every platform (requests per second and burst). */
export function defaultBudgets<R extends Registry>(registry: R): { [K in keyof R]: Budget } {
  const out: Record<string, Budget> = {};
  for (const [key, d] of Object.entries(registry)) out[key] = { perSecond: d.budget.perSecond, burst: d.budget.burst };
  return out as { [K in keyof R]: Budget };
}
