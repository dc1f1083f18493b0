import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { sendError, type ErrorCode } from '@depthgate/service-kit';

export type CacheStatus = 'HIT' | 'MISS' | 'COALESCED';

interface Subscriber {
  res: ServerResponse;
  cache: CacheStatus;
  started: boolean;
  blocked: boolean;
  /** While blocked: cuts the caller if it reads nothing more within the stall bound. */
  stall?: NodeJS.Timeout;
}

export interface Failure {
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

/**
 * One upstream answer delivered to every caller waiting for it. Callers may join until the answer has been
 * delivered: a late joiner gets the status, headers and the body so far replayed, then the rest live. The body is
 * kept for replay (and for the micro-cache) only up to `maxReplayBytes`; past that, the call stops taking joiners.
 * The upstream body is paused while any caller is not keeping up (bounded memory), and the upstream request is
 * aborted as soon as the last caller has gone. A caller that takes nothing more for `stallMs` while more waits to be
 * sent to it is cut (its connection destroyed): it cannot hold the upstream call, and with it a connection of the
 * upstream pool, for ever (undici's body timeout does not run while the body is paused). The others then go on, or
 * the call is aborted if it was the last.
 */
export class SharedResponse {
  readonly abort = new AbortController();
  private readonly subscribers = new Set<Subscriber>();
  private state: 'pending' | 'streaming' | 'done' | 'failed' = 'pending';
  private status = 0;
  private headers: OutgoingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private bytes = 0;
  private replayable = true;
  private blocked = 0;
  private failure?: Failure;
  private settled = false;
  /** Set by the forwarder: stop and restart reading the upstream body. */
  pause: () => void = () => undefined;
  resume: () => void = () => undefined;

  constructor(
    private readonly maxReplayBytes: number,
    private readonly stallMs: number,
    private readonly onSettled: () => void,
  ) {}

  get joinable(): boolean {
    return this.state === 'pending' || (this.state === 'streaming' && this.replayable);
  }

  get callers(): number {
    return this.subscribers.size;
  }

  join(res: ServerResponse, cache: CacheStatus): void {
    const sub: Subscriber = { res, cache, started: false, blocked: false };
    this.subscribers.add(sub);
    res.once('close', () => this.leave(sub));
    if (this.state === 'failed') this.deliverFailure(sub);
    else if (this.state !== 'pending') this.start(sub);
  }

  respond(status: number, headers: OutgoingHttpHeaders): void {
    if (this.state !== 'pending') return;
    this.state = 'streaming';
    this.status = status;
    this.headers = headers;
    for (const sub of this.subscribers) this.start(sub);
  }

  data(chunk: Buffer): void {
    if (this.state !== 'streaming') return;
    if (this.replayable) {
      this.bytes += chunk.length;
      if (this.bytes > this.maxReplayBytes) {
        this.replayable = false;
        this.chunks = [];
      } else {
        this.chunks.push(chunk);
      }
    }
    for (const sub of this.subscribers) this.write(sub, chunk);
  }

  end(): void {
    if (this.state !== 'streaming') return;
    this.state = 'done';
    for (const sub of this.subscribers) sub.res.end();
    this.settle();
  }

  /** The upstream call failed: an error answer to callers still waiting, a cut connection to those mid-body. */
  fail(failure: Failure): void {
    if (this.state === 'done' || this.state === 'failed') return;
    const wasStreaming = this.state === 'streaming';
    this.state = 'failed';
    this.failure = failure;
    for (const sub of this.subscribers) {
      if (wasStreaming) sub.res.destroy();
      else this.deliverFailure(sub);
    }
    this.settle();
  }

  /** The whole body, when it was complete and small enough to keep. */
  completeBody(): { status: number; headers: OutgoingHttpHeaders; body: Buffer } | undefined {
    if (this.state !== 'done' || !this.replayable) return undefined;
    return { status: this.status, headers: this.headers, body: Buffer.concat(this.chunks, this.bytes) };
  }

  private start(sub: Subscriber): void {
    if (sub.res.destroyed) return;
    sub.started = true;
    sub.res.writeHead(this.status, { ...this.headers, 'x-cache': sub.cache });
    for (const chunk of this.chunks) this.write(sub, chunk);
    if (this.state === 'done') sub.res.end();
  }

  private write(sub: Subscriber, chunk: Buffer): void {
    if (!sub.started || sub.res.destroyed) return;
    if (!sub.res.write(chunk) && !sub.blocked) {
      sub.blocked = true;
      if (this.blocked++ === 0) this.pause();
      sub.res.once('drain', () => this.unblock(sub));
      sub.stall = setTimeout(() => sub.res.destroy(), this.stallMs); // 'close' then: leave()
    }
  }

  private unblock(sub: Subscriber): void {
    if (!sub.blocked) return;
    sub.blocked = false;
    clearTimeout(sub.stall);
    if (--this.blocked === 0) this.resume();
  }

  private deliverFailure(sub: Subscriber): void {
    const f = this.failure;
    if (f && !sub.res.destroyed) sendError(sub.res, f.code, f.message, f.headers);
  }

  private leave(sub: Subscriber): void {
    if (!this.subscribers.delete(sub)) return;
    this.unblock(sub);
    if (this.subscribers.size === 0 && (this.state === 'pending' || this.state === 'streaming')) {
      this.abort.abort(new Error('every caller left'));
      this.state = 'failed';
      this.settle();
    }
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled();
  }
}
