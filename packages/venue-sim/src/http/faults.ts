import type { HostId } from './types';

export const FAULT_KINDS = ['latency', 'status', 'reset', 'truncate', 'html', 'hang'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultSpec {
  /** A host key or alias; resolved by the caller. */
  platform: string;
  /** Path prefix the fault applies to (as received, e.g. `/trade-api/v2/markets`); absent = every path. */
  route?: string;
  kind: FaultKind;
  /** latency: added delay; hang: how long to hold the request before dropping it (absent = until stop). */
  ms?: number;
  /** status: the status to answer (default 503); html: the status of the HTML page (default 502). */
  status?: number;
  /** How many requests it applies to; absent = until removed. */
  times?: number;
}

export interface ActiveFault extends FaultSpec {
  id: string;
  hosts: readonly HostId[];
  /** Requests it has applied to so far. */
  applied: number;
}

/** Faults injected at run time, matched per request by host and path prefix, oldest first. */
export class FaultRegistry {
  private faults: ActiveFault[] = [];
  private next = 1;

  inject(spec: FaultSpec, hosts: readonly HostId[]): string {
    const id = `fault-${this.next++}`;
    this.faults.push({ ...spec, id, hosts, applied: 0 });
    return id;
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((f) => f.id !== id);
    return this.faults.length !== before;
  }

  clear(): void {
    this.faults = [];
  }

  list(): ActiveFault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  /** The fault to apply to this request (consuming one of its `times`), if any. */
  take(host: HostId, path: string): ActiveFault | undefined {
    if (this.faults.length === 0) return undefined;
    for (const f of this.faults) {
      if (!f.hosts.includes(host)) continue;
      if (f.route !== undefined && !path.startsWith(f.route)) continue;
      f.applied++;
      if (f.times !== undefined && f.applied >= f.times) this.remove(f.id);
      return { ...f };
    }
    return undefined;
  }
}
