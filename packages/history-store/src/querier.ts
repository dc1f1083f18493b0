/**
 * The one way this package reads ClickHouse. Every query is named, runs under a QueryScope, and gets:
 *
 * - a place in the query gate (when the querier has one): held until ClickHouse starts answering, a scope's second
 *   and later queries ahead of scopes not yet started (query-gate.ts);
 * - the scope's time budget: `max_execution_time` on the server, the scope's own deadline and abort on the client;
 * - cancellation: the scope's abort signal ends the HTTP request, and the scope kills the query id;
 * - a tag: the name is in the query id (`dg-<name>-<uuid>`, visible in system.processes and the query log) and is the
 *   label the observer reports the query's duration and outcome under.
 *
 * `json` collects a small result (JSONEachRow) into rows; `stream` hands a large one (its SQL names the format)
 * chunk by chunk to a consumer and reads the next chunk only when the consumer is done with the last, so a slow
 * reader holds the query back instead of filling memory.
 *
 * Queries reach it as `Sql`, which only this package can make (literals.ts): a caller outside it can run the named
 * queries of queries/*.ts, never SQL of its own.
 */
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseSettings } from '@clickhouse/client';
import { newQueryId, type Connection } from './connection';
import { classifyClickHouseError, type ClickHouseFailureKind } from './errors';
import { sql, type Sql } from './literals';
import type { QueryGate } from './query-gate';
import { QueryAbortedError, QueryScope } from './scope';
import { connectionOf, type HistoryStore } from './store';

export type QueryOutcome = 'ok' | ClickHouseFailureKind;

/** What a querier reports, for the owner's metrics. Every member is optional. */
export interface QueryObserver {
  /** A query starts (+1) or stops (−1) waiting for a place in the gate. */
  waiting?(delta: 1 | -1): void;
  /** How long a query waited for its place, in seconds. */
  waited?(seconds: number): void;
  /** A query ended: its name, how, and how long it took in seconds (streaming its result included). */
  ended?(name: string, outcome: QueryOutcome, seconds: number): void;
}

export interface QuerierOptions {
  /** Bounds how many of this querier's queries ClickHouse works on at once; none: no bound. */
  gate?: QueryGate;
  observer?: QueryObserver;
}

export interface StreamOptions {
  /** Run on one ClickHouse thread: less overhead for a small read, and more such reads at once. */
  singleThread?: boolean;
}

/** A row of a JSONEachRow result, before the named query turns it into its type. */
export type JsonRow = Record<string, unknown>;

const release0 = () => undefined;

export class Querier {
  private readonly connection: Connection;
  private readonly gate: QueryGate | undefined;
  private readonly observer: QueryObserver;

  constructor(store: HistoryStore, options: QuerierOptions = {}) {
    this.connection = connectionOf(store);
    this.gate = options.gate;
    this.observer = options.observer ?? {};
  }

  /** The database of the store, as an SQL identifier (named queries name their tables with it). */
  get db(): Sql {
    return this.connection.db;
  }

  /** A small query that is a unit of work of its own: under a scope with a budget of `budgetMs`. */
  async jsonWithin<T>(budgetMs: number, name: string, query: Sql, row: (r: JsonRow) => T): Promise<T[]> {
    const connection = this.connection;
    const scope = new QueryScope((queryId) => connection.kill(queryId), budgetMs);
    try {
      return await this.json(scope, name, query, row);
    } finally {
      scope.dispose();
    }
  }

  /** Runs a query whose result is small and returns its rows, each through `row`. */
  json<T>(scope: QueryScope, name: string, query: Sql, row: (r: JsonRow) => T): Promise<T[]> {
    return this.run(scope, name, sql`${query}\nFORMAT JSONEachRow`, {}, async (stream) => {
      const chunks: Buffer[] = [];
      await eachChunk(stream, (chunk) => {
        chunks.push(chunk);
      });
      return Buffer.concat(chunks)
        .toString('utf8')
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => row(JSON.parse(line) as JsonRow));
    });
  }

  /**
   * Runs a query (its SQL names its output format) and hands the raw output to `onChunk` as it arrives; the next
   * chunk is read only after `onChunk` resolved (back-pressure reaches ClickHouse through the socket).
   */
  stream(
    scope: QueryScope,
    name: string,
    query: Sql,
    onChunk: (chunk: Buffer) => Promise<void> | void,
    options: StreamOptions = {},
  ): Promise<void> {
    const settings: ClickHouseSettings = options.singleThread ? { max_threads: 1 } : {};
    return this.run(scope, name, query, settings, (stream) => eachChunk(stream, onChunk));
  }

  private async run<T>(
    scope: QueryScope,
    name: string,
    query: Sql,
    settings: ClickHouseSettings,
    consume: (stream: Readable) => Promise<T>,
  ): Promise<T> {
    const queryId = newQueryId(name);
    const started = process.hrtime.bigint();
    const continuation = scope.enter(queryId);
    try {
      const stream = await this.send(query, queryId, scope, continuation, settings);
      let value: T;
      try {
        value = await consume(stream);
      } catch (err) {
        throw abortedBy(scope, err);
      } finally {
        if (!stream.destroyed) stream.destroy();
      }
      // An aborted request may end its stream quietly after what was buffered: that is no complete result.
      if (scope.reason !== undefined) throw new QueryAbortedError(scope.reason);
      this.observer.ended?.(name, 'ok', seconds(started));
      return value;
    } catch (err) {
      this.observer.ended?.(name, outcome(err, scope), seconds(started));
      throw err;
    } finally {
      scope.leave(queryId);
    }
  }

  /**
   * Sends a query once the gate has a place for it, and frees the place when ClickHouse starts answering (or the
   * query failed before that).
   */
  private async send(
    query: Sql,
    queryId: string,
    scope: QueryScope,
    continuation: boolean,
    settings: ClickHouseSettings,
  ) {
    let release: () => void = release0;
    if (this.gate) {
      const waitStarted = process.hrtime.bigint();
      this.observer.waiting?.(1);
      try {
        release = await this.gate.acquire(scope.signal, continuation);
      } finally {
        this.observer.waiting?.(-1);
      }
      this.observer.waited?.(seconds(waitStarted));
    }
    try {
      const pinned = await this.connection.settingsFor('read');
      return await this.connection.reads.read({
        query: query.text,
        queryId,
        signal: scope.signal,
        settings: { ...pinned, max_execution_time: scope.maxExecutionTimeSeconds(), ...settings },
      });
    } catch (err) {
      throw abortedBy(scope, err);
    } finally {
      release();
    }
  }
}

/**
 * Each chunk of `stream` as it came to `onChunk`, the next one only once the promise `onChunk` returned (if any)
 * resolved; resolves when the stream ended and the last chunk was taken, rejects with the stream's failure (a
 * premature close included) or `onChunk`'s. Not `for await`: a Readable's async iterator takes what is buffered with
 * `read()`, which joins the pieces into a new buffer, and ClickHouse 18.16 answers in 4 KiB HTTP chunks, so most of a
 * fast answer was copied once more (docs/benchmarks.md, "Warm-up and the allocator").
 */
export function eachChunk(stream: Readable, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failed = false;
    /** The last chunk's consumer: the stream may end while it still works (a pause does not hold 'end' back). */
    let taken: Promise<void> = Promise.resolve();
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      stream.off('data', onData);
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      let pending: Promise<void> | void;
      try {
        pending = onChunk(chunk);
      } catch (err) {
        fail(err);
        return;
      }
      if (!pending) return;
      stream.pause();
      taken = pending.then(() => {
        if (!failed) stream.resume();
      });
      taken.catch(fail);
    };
    stream.on('data', onData);
    finished(stream).then(() => taken.then(() => !failed && resolve(), fail), fail);
  });
}

/**
 * A failure of a request or its answer once the scope was aborted is the abort's doing (it ends the request: an
 * AbortError, or `aborted` from a response cut short): the scope says why.
 */
function abortedBy(scope: QueryScope, err: unknown): unknown {
  return scope.reason === undefined ? err : new QueryAbortedError(scope.reason);
}

function seconds(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e9;
}

/** How a query ended: the scope's own abort says more than the error it caused. */
function outcome(err: unknown, scope: QueryScope): QueryOutcome {
  if (scope.reason === 'timeout') return 'timeout';
  if (scope.reason === 'cancelled') return 'cancelled';
  return classifyClickHouseError(err).kind;
}
