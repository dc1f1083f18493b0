import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { answerHttpLayerErrors, missingHost, refuseMissingHost } from './client-errors';
import { sendError } from './errors';

type Hook = () => Promise<void> | void;

/**
 * Process lifecycle: readiness turns red as soon as draining starts; shutdown hooks (close Redis, ClickHouse,
 * flush buffers) run after the HTTP server has drained, in reverse order of registration.
 */
export class Lifecycle {
  draining = false;
  private readonly hooks: { name: string; hook: Hook }[] = [];
  private readonly drainHooks: { name: string; hook: Hook }[] = [];

  onShutdown(name: string, hook: Hook): void {
    this.hooks.push({ name, hook });
  }

  /**
   * Runs when the server stops accepting connections, before it waits for open ones: for connections that would
   * otherwise never end by themselves (WebSockets are told to reconnect elsewhere).
   */
  onDrain(name: string, hook: Hook): void {
    this.drainHooks.push({ name, hook });
  }

  async runDrainHooks(logger: Logger): Promise<void> {
    for (const { name, hook } of this.drainHooks) {
      try {
        await hook();
      } catch (err) {
        logger.error({ err, hook: name }, 'drain hook failed');
      }
    }
  }

  async runHooks(logger: Logger): Promise<void> {
    for (const { name, hook } of [...this.hooks].reverse()) {
      try {
        await hook();
      } catch (err) {
        logger.error({ err, hook: name }, 'shutdown hook failed');
      }
    }
  }
}

export interface ServeOptions {
  port: number;
  host: string;
  logger: Logger;
  lifecycle: Lifecycle;
  /** Time between turning readiness red and refusing new connections, so load balancers stop routing to us. */
  shutdownDelayMs: number;
  /** Longest time in-flight requests get to finish before their connections are cut. */
  drainTimeoutMs: number;
  /** Exit the process after shutdown (false in tests). */
  exit?: boolean;
  /**
   * Let several processes listen on the same port (SO_REUSEPORT; Linux spreads connections across them): how a
   * host runs one process per core without a cluster master. Each process is a full, independent replica.
   */
  reusePort?: boolean;
}

export interface RunningServer {
  server: http.Server;
  port: number;
  shutdown: (reason: string) => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An `Upgrade` header asking for WebSocket (a list may name it beside others). */
function isWebSocketUpgrade(req: http.IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').split(',').some((p) => p.trim().toLowerCase() === 'websocket');
}

/** How long the 503s of the drain's deadline get to be written before the connections are cut. */
const LAST_ANSWERS_MS = 1000;

/**
 * At the drain's deadline, the requests not yet answered get a 503 `service_unavailable` (connection closed) instead
 * of a reset; resolves once those are written, at most after LAST_ANSWERS_MS. A response already started cannot be
 * answered otherwise: its connection is cut with the others.
 */
function answerUnstarted(open: Set<http.ServerResponse>): Promise<void> {
  const written: Promise<void>[] = [];
  for (const res of open) {
    if (res.headersSent || res.destroyed) continue;
    written.push(new Promise<void>((resolve) => res.once('close', () => resolve())));
    res.setHeader('Connection', 'close');
    sendError(res, 'service_unavailable', 'The server is shutting down; retry the request');
  }
  if (written.length === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const cap = setTimeout(resolve, LAST_ANSWERS_MS);
    void Promise.all(written).then(() => {
      clearTimeout(cap);
      resolve();
    });
  });
}

export async function serve(handler: RequestListener, options: ServeOptions): Promise<RunningServer> {
  const { logger, lifecycle } = options;
  // Responses under way, for the drain's deadline (answerUnstarted).
  const open = new Set<http.ServerResponse>();
  const server: http.Server = http.createServer(
    {
      // Longer than the usual 60 s idle timeout of load balancers, so they close idle connections first.
      keepAliveTimeout: 65_000,
      headersTimeout: 66_000,
      requestTimeout: 120_000,
      // Checked below, so that the refusal has the documented JSON body (Node's own is an empty 400).
      requireHostHeader: false,
      // Only a WebSocket upgrade, to a server that takes upgrades, is one; any other (`Upgrade: h2c` from `curl
      // --http2`) is answered as the plain request it also is (RFC 9110 §7.8: a server may ignore Upgrade).
      shouldUpgradeCallback: (req): boolean => server.listenerCount('upgrade') > 0 && isWebSocketUpgrade(req),
    },
    (req, res) => {
      open.add(res);
      res.once('close', () => open.delete(res));
      if (lifecycle.draining) res.setHeader('Connection', 'close');
      if (missingHost(req)) return refuseMissingHost(req, res);
      handler(req, res);
    },
  );
  answerHttpLayerErrors(server, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, reusePort: options.reusePort ?? false }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, host: options.host }, 'listening');

  let shuttingDown: Promise<void> | undefined;
  const shutdown = (reason: string): Promise<void> => {
    shuttingDown ??= (async () => {
      logger.info({ reason }, 'draining');
      lifecycle.draining = true;
      await sleep(options.shutdownDelayMs);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await lifecycle.runDrainHooks(logger);
      server.closeIdleConnections();
      const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
      let deadline: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        closed.then(() => true),
        new Promise<boolean>((resolve) => {
          deadline = setTimeout(() => resolve(false), options.drainTimeoutMs);
        }),
      ]);
      clearTimeout(deadline);
      clearInterval(idleSweep);
      if (!drained) {
        logger.warn({ drainTimeoutMs: options.drainTimeoutMs }, 'drain timeout: closing remaining connections');
        await answerUnstarted(open);
        server.closeAllConnections();
      }
      await lifecycle.runHooks(logger);
      logger.info('stopped');
      logger.flush?.();
      if (options.exit !== false) setImmediate(() => process.exit(0));
    })();
    return shuttingDown;
  };
  if (options.exit !== false) {
    // `on`, not `once`: a second signal during the shutdown joins it (shutdown runs once) instead of meeting Node's
    // default handler, which would end the process in the middle of its flush.
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
  }
  return { server, port, shutdown };
}
