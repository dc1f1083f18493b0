import type { HostId, RecordedRequest } from './types';

export interface RequestFilter {
  /** A host key or any alias (`kalshi`, `venue-b`, `venue_a_us`, ...), already resolved to hosts. */
  hosts?: readonly HostId[];
  pathPrefix?: string;
}

/** Every request the simulator received, in arrival order, bounded to the most recent `capacity`. */
export class RequestLog {
  private entries: RecordedRequest[] = [];
  private nextId = 1;
  private droppedCount = 0;

  constructor(
    private readonly capacity: number,
    private readonly enabled: boolean,
  ) {}

  add(entry: Omit<RecordedRequest, 'id'>): RecordedRequest {
    const record: RecordedRequest = { id: this.nextId++, ...entry };
    if (!this.enabled) return record;
    this.entries.push(record);
    if (this.entries.length > this.capacity) {
      const drop = Math.max(1, Math.floor(this.capacity / 10));
      this.entries = this.entries.slice(drop);
      this.droppedCount += drop;
    }
    return record;
  }

  list(filter: RequestFilter = {}): RecordedRequest[] {
    const hosts = filter.hosts ? new Set(filter.hosts) : undefined;
    const out: RecordedRequest[] = [];
    for (const r of this.entries) {
      if (hosts && !hosts.has(r.platform)) continue;
      if (filter.pathPrefix !== undefined && !r.path.startsWith(filter.pathPrefix)) continue;
      out.push({ ...r, headers: { ...r.headers } });
    }
    return out;
  }

  clear(): void {
    this.entries = [];
  }

  /** Requests forgotten because the log was full. */
  get dropped(): number {
    return this.droppedCount;
  }
}
