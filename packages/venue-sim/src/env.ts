/**
 * The environment the simulator hands to the deployables (gateway, recorder, users' own services): every upstream
 * URL, feed URL and test credential variable of the platforms it serves, named by their descriptors
 * (@depthgate/platforms). Secrets go to files (mode 0600) named after their variable, passed as `NAME_FILE`.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hostId, type CredentialGroups, type FeedId, type HostId as KnownHostId } from '@depthgate/platforms';
import { DEFAULT_TOPOLOGY } from './default-topology';
import type { HostId } from './http/types';
import type { Topology } from './topology';

/**
 * Base URL of every host (`http://127.0.0.1:p/trade-api/v2` for `venue-b`), and the control server's; hosts of
 * extra platforms (SimulatorOptions.extraPlatforms) are there too, under their ids.
 */
export type SimUrls = Readonly<Record<KnownHostId | 'control', string>> & { readonly [id: HostId]: string | undefined };
/** URL of every feed, by platform key (`venue-b`) or `key/feed` for a platform's other feeds. */
export type SimFeeds = Readonly<Record<FeedId, string>> & { readonly [id: string]: string | undefined };
/** Test credential values of each platform, by variable name (the descriptor's). */
export type SimCredentialEnv = Readonly<Record<string, Readonly<Record<string, string>>>>;

interface EnvEntry {
  name: string;
  value: (urls: SimUrls, feeds: SimFeeds, credentials: SimCredentialEnv) => string | undefined;
  /** A secret written to a file; `name` ends in `_FILE`. */
  secret?: boolean;
}

function entries(topology: Topology): EnvEntry[] {
  const out: EnvEntry[] = [];
  const platforms = Object.entries(topology.platforms);
  for (const [key, { descriptor }] of platforms) {
    for (const [name, spec] of Object.entries(descriptor.hosts)) {
      out.push({ name: spec.env, value: (urls) => urls[hostId(key, name)] });
    }
  }
  for (const [key, { descriptor, sim }] of platforms) {
    const groups = descriptor.credentials as CredentialGroups;
    for (const id of sim.signs ?? []) {
      for (const v of groups[id]?.vars ?? []) {
        out.push({
          name: v.secret ? `${v.env}_FILE` : v.env,
          value: (_u, _f, credentials) => credentials[key]?.[v.env],
          secret: v.secret,
        });
      }
    }
  }
  for (const [key, { descriptor }] of platforms) {
    for (const [name, spec] of Object.entries(descriptor.feeds ?? {})) {
      out.push({ name: spec.env, value: (_u, feeds) => feeds[hostId(key, name)] });
    }
  }
  return out;
}

/** The variables the simulator writes, in order. */
export function envNames(topology: Topology = DEFAULT_TOPOLOGY): string[] {
  return entries(topology).map((e) => e.name);
}

/** The variables of the default simulator, in the order they are written. */
export const ENV_NAMES: readonly string[] = envNames();

/** Writes the secret files into `dir` (mode 0600) and returns the full variable set pointing at them. */
export function writeSecretsAndBuildEnv(
  dir: string,
  topology: Topology,
  urls: SimUrls,
  feeds: SimFeeds,
  credentials: SimCredentialEnv,
): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const env: Record<string, string> = {};
  for (const e of entries(topology)) {
    const value = e.value(urls, feeds, credentials);
    if (value === undefined) throw new Error(`the simulator has no value for ${e.name}`);
    if (e.secret) {
      const file = path.join(
        dir,
        e.name
          .replace(/_FILE$/, '')
          .toLowerCase()
          .replace(/_/g, '-'),
      );
      writeFileSync(file, value, { mode: 0o600 });
      chmodSync(file, 0o600);
      env[e.name] = file;
    } else {
      env[e.name] = value;
    }
  }
  return env;
}

/** `KEY=value` lines (values here never contain spaces or quotes). */
export function formatEnvFile(env: Record<string, string>): string {
  return (
    '# Written by the venue simulator (packages/venue-sim): upstream URLs and test credentials.\n' +
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') +
    '\n'
  );
}

/** Writes the variables to `file` (mode 0600); the secret files they point at are written by `sim.env(dir)`. */
export function writeEnvFile(file: string, vars: Record<string, string>): void {
  writeFileSync(file, formatEnvFile(vars), { mode: 0o600 });
  chmodSync(file, 0o600);
}
