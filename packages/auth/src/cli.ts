#!/usr/bin/env node
/**
 * API key administration (behind `./dev keys`). Keys are issued by hand on request (spec, Authentication 3).
 *
 *   create --name N [--ticker-prefixes KX,BTC] [--max-data-age-days 30] [--full-history-prefixes KXBTC]
 *          [--requests-per-minute 600] [--platforms venue-b,venue-d] [--ws-max-connections 10]
 *          [--ws-max-subscriptions 200] [--json]
 *   list [--json]          show ID [--json]          revoke ID [--json]
 *
 * `create` prints the new key alone on its last line (with --json: the record plus the key, one JSON line).
 * No other command ever prints a key. Exit status: 0 done, 1 failed (e.g. unknown id, Redis down), 2 bad arguments.
 * `list` with invalid stored records (edited by hand, written by another version) lists the valid ones as usual, names
 * each invalid one on stderr (its id and what is wrong, never its hash) and exits 1; `show` of an invalid record
 * prints nothing on stdout, names it the same way (by the id asked for, also when the record is not JSON) and exits 1.
 * `revoke` of an invalid record deletes it (its key is refused for good), says so on stdout with what was wrong and
 * exits 0.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { envString, parseEnv } from '@depthgate/service-kit';
import { redisEnvShape } from './config';
import { KEY_ID_PATTERN } from './api-key';
import { canonicalPlatform, PLATFORM_KEYS, TICKER_PREFIX_PATTERN, type PlatformKey } from './entitlements';
import { InvalidKeyRecordError, publicView, type KeyRecord, type NewKeyInput } from './key-record';
import { RedisKeyStore } from './key-store';
import { createRedisClient, redisTarget, waitForRedis } from './redis';

class UsageError extends Error {}

const USAGE = `usage:
  keys create --name NAME [--ticker-prefixes P1,P2] [--max-data-age-days N] [--full-history-prefixes P1,P2]
              [--requests-per-minute N] [--platforms venue-b,venue-d] [--ws-max-connections N]
              [--ws-max-subscriptions N] [--json]
  keys list [--json]
  keys show ID [--json]
  keys revoke ID [--json]`;

function positiveInt(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^[1-9][0-9]{0,8}$/.test(value)) throw new UsageError(`${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

function prefixes(flag: string, value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length === 0) throw new UsageError(`${flag} needs at least one prefix`);
  for (const p of list) {
    if (!TICKER_PREFIX_PATTERN.test(p)) {
      throw new UsageError(`${flag}: "${p}" is not a ticker prefix (letters, digits, ".", "-", "_"; at most 128)`);
    }
  }
  return list;
}

function platforms(value: string | undefined): PlatformKey[] | null {
  if (value === undefined) return null;
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length === 0) throw new UsageError('--platforms needs at least one platform');
  return [
    ...new Set(
      list.map((p) => {
        const key = canonicalPlatform(p);
        if (!key) throw new UsageError(`--platforms: unknown platform "${p}" (one of ${PLATFORM_KEYS.join(', ')})`);
        return key;
      }),
    ),
  ];
}

function parseCreate(args: string[]): { input: NewKeyInput; json: boolean } {
  const { values, positionals } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      'ticker-prefixes': { type: 'string' },
      'max-data-age-days': { type: 'string' },
      'full-history-prefixes': { type: 'string' },
      'requests-per-minute': { type: 'string' },
      platforms: { type: 'string' },
      'ws-max-connections': { type: 'string' },
      'ws-max-subscriptions': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`create: unexpected argument "${positionals[0]}"`);
  const name = values.name?.trim();
  if (!name) throw new UsageError('create: --name is required');
  if (name.length > 100) throw new UsageError('create: --name is at most 100 characters');
  return {
    json: values.json ?? false,
    input: {
      name,
      ticker_prefixes: prefixes('--ticker-prefixes', values['ticker-prefixes']),
      max_data_age_days: positiveInt('--max-data-age-days', values['max-data-age-days']),
      full_history_prefixes: prefixes('--full-history-prefixes', values['full-history-prefixes']),
      requests_per_minute: positiveInt('--requests-per-minute', values['requests-per-minute']),
      platforms: platforms(values.platforms),
      ws_max_connections: positiveInt('--ws-max-connections', values['ws-max-connections']),
      ws_max_subscriptions: positiveInt('--ws-max-subscriptions', values['ws-max-subscriptions']),
    },
  };
}

function parseId(command: string, args: string[]): { id: string; json: boolean } {
  const { values, positionals } = parseArgs({
    args,
    options: { json: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError(`${command}: expected exactly one key id`);
  const id = positionals[0] ?? '';
  if (!KEY_ID_PATTERN.test(id)) throw new UsageError(`${command}: "${id}" is not a key id (key_ + 16 hex digits)`);
  return { id, json: values.json ?? false };
}

function describe(record: KeyRecord): string {
  const v = publicView(record);
  const list = (l: string[] | null) => (l ? l.join(', ') : 'all');
  return [
    `${v.id}  ${v.name}`,
    `  created_at             ${v.created_at}`,
    `  revoked_at             ${v.revoked_at ?? '-'}`,
    `  ticker_prefixes        ${list(v.ticker_prefixes)}`,
    `  max_data_age_days      ${v.max_data_age_days ?? 'unlimited'}`,
    `  full_history_prefixes  ${v.full_history_prefixes ? v.full_history_prefixes.join(', ') : '-'}`,
    `  requests_per_minute    ${v.requests_per_minute ?? 'default'}`,
    `  platforms              ${list(v.platforms)}`,
    `  ws_max_connections     ${v.ws_max_connections ?? 'default'}`,
    `  ws_max_subscriptions   ${v.ws_max_subscriptions ?? 'default'}`,
  ].join('\n');
}

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const [command, ...rest] = argv;
  let parsed:
    | { kind: 'create'; input: NewKeyInput; json: boolean }
    | { kind: 'list'; json: boolean }
    | { kind: 'show' | 'revoke'; id: string; json: boolean };
  try {
    switch (command) {
      case 'create':
        parsed = { kind: 'create', ...parseCreate(rest) };
        break;
      case 'list': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { json: { type: 'boolean', default: false } },
          allowPositionals: true,
          strict: true,
        });
        if (positionals.length > 0) throw new UsageError(`list: unexpected argument "${positionals[0]}"`);
        parsed = { kind: 'list', json: values.json ?? false };
        break;
      }
      case 'show':
      case 'revoke':
        parsed = { kind: command, ...parseId(command, rest) };
        break;
      default:
        throw new UsageError(command ? `unknown command "${command}"` : 'a command is required');
    }
  } catch (err) {
    const message =
      err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
        ? (err as Error).message
        : String(err);
    console.error(`error: ${message}\n${USAGE}`);
    return 2;
  }

  const config = parseEnv(z.object({ ...redisEnvShape, REDIS_KEY_PREFIX: envString('dg:') }), env);
  const redis = createRedisClient(redisTarget(config), {
    name: 'depthgate-keys-cli',
    offlineQueue: true,
    commandTimeoutMs: 5000,
  });
  try {
    await waitForRedis(redis, 5000);
    const store = new RedisKeyStore(redis, config.REDIS_KEY_PREFIX);
    switch (parsed.kind) {
      case 'create': {
        const { record, key } = await store.create(parsed.input);
        if (parsed.json) {
          console.log(JSON.stringify({ ...publicView(record), key }));
        } else {
          console.log(describe(record));
          console.log('The key is shown only now and cannot be recovered; give it to its owner:');
          console.log(key);
        }
        return 0;
      }
      case 'list': {
        const { records, invalid } = await store.list();
        if (parsed.json) {
          console.log(JSON.stringify(records.map(publicView)));
        } else if (records.length === 0) {
          console.log(invalid.length === 0 ? 'no keys' : 'no valid keys');
        } else {
          for (const r of records) {
            console.log(
              `${r.id}  ${r.revoked_at ? 'revoked' : 'active '}  ${r.created_at}  rpm=${r.requests_per_minute ?? 'default'}  ${r.name}`,
            );
          }
        }
        if (invalid.length === 0) return 0;
        for (const problem of invalid) console.error(`error: ${problem.message}`);
        console.error(
          `error: ${invalid.length} of ${records.length + invalid.length} key records are invalid (their keys are refused); listed the others`,
        );
        return 1;
      }
      case 'show':
      case 'revoke': {
        const record = parsed.kind === 'show' ? await store.get(parsed.id) : await store.revoke(parsed.id);
        if (!record) {
          console.error(`error: no key with id ${parsed.id}`);
          return 1;
        }
        if (record instanceof InvalidKeyRecordError) {
          if (parsed.json) console.log(JSON.stringify({ id: parsed.id, removed: true, invalid: record.problems }));
          else {
            const problems = record.problems.join('; ');
            console.log(
              `revoked ${parsed.id}: its record was invalid (${problems}), so it was deleted; its key is refused for good`,
            );
          }
          return 0;
        }
        if (parsed.json) console.log(JSON.stringify(publicView(record)));
        else console.log(parsed.kind === 'revoke' ? `revoked ${record.id} at ${record.revoked_at}` : describe(record));
        return 0;
      }
    }
  } catch (err) {
    console.error(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    redis.disconnect();
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`error: ${(err as Error).message}`);
      process.exitCode = 1;
    },
  );
}
