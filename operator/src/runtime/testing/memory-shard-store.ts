// An in-memory ShardStore with the API's conditional-write semantics, for the membership loop's tests.
import type { MarkerRecord, ShardLeaseRecord, ShardStore } from "../../adapters/shard-lease-store.js";

export class MemoryShardStore {
  readonly shards = new Map<string, ShardLeaseRecord>();
  readonly markers = new Map<string, MarkerRecord>();
  /** Every marker write that succeeded, in order. */
  readonly markerWrites: Array<{ namespace: string; holder: string; by: string }> = [];
  private version = 0;
  /** Identities whose requests fail (a partition). */
  readonly failing = new Set<string>();

  /** The store as one replica sees it: its requests fail while it is in `failing`. */
  as(identity: string): ShardStore {
    const check = () => {
      if (this.failing.has(identity)) throw new Error(`${identity}: connection refused`);
    };
    return {
      renew: async (id, renewTime, leaseDurationMs) => {
        check();
        this.shards.set(id, {
          identity: id,
          renewTime,
          leaseDurationMs: Math.max(1, Math.ceil(leaseDurationMs / 1000)) * 1000,
        });
      },
      retire: async (id) => {
        check();
        this.shards.delete(id);
      },
      listShards: async () => {
        check();
        return [...this.shards.values()].map((s) => ({ ...s }));
      },
      listMarkers: async () => {
        check();
        return [...this.markers.values()].map((m) => ({ ...m }));
      },
      deleteMarker: async (namespace, resourceVersion) => {
        check();
        const current = this.markers.get(namespace);
        if (!current) return "deleted";
        if (current.resourceVersion !== resourceVersion) return "conflict";
        this.markers.delete(namespace);
        this.markerWrites.push({ namespace, holder: "(deleted)", by: identity });
        return "deleted";
      },
      writeMarker: async (namespace, holder, resourceVersion) => {
        check();
        const current = this.markers.get(namespace);
        if (current?.resourceVersion !== resourceVersion) return "conflict";
        const next = { namespace, holder, resourceVersion: String(++this.version) };
        this.markers.set(namespace, next);
        this.markerWrites.push({ namespace, holder, by: identity });
        return { resourceVersion: next.resourceVersion };
      },
    };
  }
}
