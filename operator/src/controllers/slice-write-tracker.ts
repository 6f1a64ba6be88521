// What this process last wrote to each EndpointSlice, by generation, in the manner of the
// Kubernetes EndpointSliceTracker: a cache that shows an older generation than we wrote, a slice
// we deleted, or misses one we created, is stale, and nothing is planned from it. Generations
// are integers the API server assigns to an object's spec; resourceVersions are never compared.
import type { Clock } from "../runtime/clock.js";

/** Deleted by us: the cache must stop showing it. */
const DELETED = -1;

/** A cache that lags this long is not lagging: trust it, and a 409 if it is wrong. */
export const TRACKER_TTL_MS = 10_000;

interface Written {
  generation: number;
  at: number;
}

export interface TrackedSlice {
  metadata?: { name?: string; generation?: number } | undefined;
}

export class SliceWriteTracker {
  /** Per Service key (namespace/service): slice name -> what we wrote. */
  private readonly written = new Map<string, Map<string, Written>>();

  constructor(private readonly clock: Clock) {}

  /** A create or update the server answered; a reply without a generation is not tracked. */
  wrote(service: string, reply: TrackedSlice | undefined): void {
    const name = reply?.metadata?.name;
    const generation = reply?.metadata?.generation;
    if (!name || generation === undefined) return;
    this.entries(service).set(name, { generation, at: this.clock.now() });
  }

  deleted(service: string, name: string): void {
    this.entries(service).set(name, { generation: DELETED, at: this.clock.now() });
  }

  /**
   * Whether the cached slices of a Service are older than what this process wrote. Entries the
   * cache has caught up with (or that outlived the TTL) are dropped as a side effect.
   */
  isStale(service: string, cached: readonly TrackedSlice[]): boolean {
    const own = this.written.get(service);
    if (!own) return false;
    const now = this.clock.now();
    const inCache = new Map(cached.map((s) => [s.metadata?.name ?? "", s.metadata?.generation ?? 0]));
    let stale = false;
    for (const [name, w] of own) {
      const cachedGeneration = inCache.get(name);
      const caughtUp =
        w.generation === DELETED
          ? cachedGeneration === undefined
          : cachedGeneration !== undefined && cachedGeneration >= w.generation;
      if (caughtUp || now - w.at > TRACKER_TTL_MS) own.delete(name);
      else stale = true;
    }
    if (own.size === 0) this.written.delete(service);
    return stale;
  }

  forget(service: string): void {
    this.written.delete(service);
  }

  private entries(service: string): Map<string, Written> {
    let own = this.written.get(service);
    if (!own) this.written.set(service, (own = new Map()));
    return own;
  }
}
