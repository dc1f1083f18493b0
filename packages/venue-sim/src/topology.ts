/**
 * Which hosts one simulator serves, derived from the platforms' descriptors (@depthgate/platforms) and the
 * simulator's platform modules: a host per descriptor host, named as the gateway names its targets (`venue-b`,
 * `venue-a-us/auth`), each on its own 127.0.0.1 port at a fixed offset from the base port (control = base, then the
 * hosts in registry order). Names accepted wherever a platform is named (faults, rate limits, request filters, books,
 * feeds): host ids, platform keys and their real-name aliases, exchange keys and theirs. A platform whose module
 * declares `book` has moving books, kept under its key (the book engine's partition).
 * The product's own topology is default-topology.ts.
 */
import { hostId, type AnyDescriptor } from '@depthgate/platforms';
import type { BookPlatform } from './book/types';
import type { RateLimitConfig } from './http/rate-limit';
import type { HostId } from './http/types';
import type { AnySimPlatform } from './platforms/platform';

export interface SimPlatformEntry {
  descriptor: AnyDescriptor;
  sim: AnySimPlatform;
}

export interface TopologyHost {
  id: HostId;
  platform: string;
  /** The descriptor's name of the host (`main`, `auth`). */
  name: string;
}

export class Topology {
  readonly hosts: readonly TopologyHost[];
  private readonly byName = new Map<string, HostId[]>();
  private readonly books = new Map<string, BookPlatform>();

  constructor(readonly platforms: Readonly<Record<string, SimPlatformEntry>>) {
    const hosts: TopologyHost[] = [];
    for (const [key, { descriptor, sim }] of Object.entries(platforms)) {
      const own: HostId[] = [];
      for (const name of Object.keys(descriptor.hosts as object)) {
        const id = hostId(key, name);
        hosts.push({ id, platform: key, name });
        own.push(id);
        this.byName.set(id, [id]);
      }
      const names = [key, ...descriptor.aliases];
      if (descriptor.exchange) names.push(descriptor.exchange.key, ...descriptor.exchange.aliases);
      for (const n of names) {
        if (!this.byName.has(n)) this.byName.set(n, own);
        if (sim.book) this.books.set(n, key);
      }
    }
    this.hosts = hosts;
  }

  /** Port offset from the base port (the control server is 0). */
  portOffset(id: HostId): number {
    return this.hosts.findIndex((h) => h.id === id) + 1;
  }

  /** The hosts a name stands for, or undefined for an unknown name. */
  resolveHosts(name: string): readonly HostId[] | undefined {
    return this.byName.get(name);
  }

  /** The book platform a name stands for (`venue_b`, `kalshi`, `venue-b` → `venue-b`), or undefined. */
  resolveBookPlatform(name: string): BookPlatform | undefined {
    return this.books.get(name);
  }

  /** The platforms with moving books, in registry order. */
  bookPlatforms(): BookPlatform[] {
    return Object.entries(this.platforms)
      .filter(([, p]) => p.sim.book !== undefined)
      .map(([key]) => key);
  }

  /** The recorded exchanges among them: exchange key → platform key (`venue_b` → `venue-b`). */
  recordedBooks(): Record<string, BookPlatform> {
    const out: Record<string, BookPlatform> = {};
    for (const [key, { descriptor, sim }] of Object.entries(this.platforms)) {
      if (sim.book && descriptor.exchange) out[descriptor.exchange.key] = key;
    }
    return out;
  }

  /** The platform key a name stands for (a key, a host id, an alias). */
  platformOf(name: string): string | undefined {
    const id = this.byName.get(name)?.[0];
    return id === undefined ? undefined : this.hosts.find((h) => h.id === id)?.platform;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Each host's documented rate limit (the platform modules'). */
  defaultRateLimits(): Record<HostId, RateLimitConfig | null> {
    const out: Record<HostId, RateLimitConfig | null> = {};
    for (const h of this.hosts) out[h.id] = this.platforms[h.platform]?.sim.rateLimits[h.name] ?? null;
    return out;
  }
}
