// The shell around the shard ownership planner (domain/shard-ownership.ts): every retry period it
// renews this replica's shard Lease, reads the ring fresh from the API, plans, and applies the
// plan. A release first stops acting on the namespace and waits for its writes in flight, then
// writes the marker's holder "" (the acknowledgement the next owner waits for); an acquire acts
// only once its conditional write succeeded. ownsNamespace() also answers false the instant the
// replica is fenced, between ticks.
import type { MarkerRecord, ShardStore } from "../adapters/shard-lease-store.js";
import {
  isFenced,
  namespacesToCache,
  planOwnership,
  renewalAnswered,
  type HandoverMarker,
  type OwnershipPlan,
  type ShardSelf,
} from "../domain/shard-ownership.js";
import { realClock, type Clock, type TimerHandle } from "./clock.js";
import type { LogSink } from "./logger.js";

export interface ShardMembershipOptions {
  store: ShardStore;
  identity: string;
  clock?: Clock;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** How far apart the replicas' clocks may be: a dead replica's namespaces move this much after its lease expired. */
  skewMarginMs: number;
  /** The namespaces to share out (those with work in them). */
  namespaces: () => Iterable<string>;
  /** Resolves once no write for the namespace is in flight; a release waits for it before acknowledging. */
  writesSettled?: (namespace: string) => Promise<void>;
  /** Called once this replica may act on the namespace (its marker write succeeded). */
  onGained?: (namespace: string) => void;
  /** Called the moment this replica stops acting on the namespace, before any acknowledgement. */
  onLost?: (namespace: string) => void;
  /**
   * This replica's caches of the namespaced kinds, when they follow its namespaces (one
   * list+watch per namespace): absent, the caches hold the whole cluster.
   */
  caches?: NamespaceCaches;
  /** The number of namespaces owned after each tick. */
  onOwned?: (count: number) => void;
  logger?: LogSink;
}

/**
 * Caches that follow the namespaces this replica owns or is about to: started before it
 * acquires, complete before it acts (nothing is decided from a partial cache), dropped once it
 * let go. Every marker's namespace is shared out then, work seen or not: leftovers of a deleted
 * policy (gated pods, managed slices) are seen only in the caches of the namespace's owner.
 */
export interface NamespaceCaches {
  /** Follows exactly these namespaces: starts the missing ones, stops and drops the others. */
  follow(namespaces: ReadonlySet<string>): Promise<void>;
  /** True once every cache of the namespace holds a complete list. */
  synced(namespace: string): boolean;
  /**
   * True when the namespace's complete caches hold nothing to act on (no policy, no slice this
   * operator manages, no pod with the readiness gate): its owner then retires the marker, so a
   * namespace emptied or deleted is shared out (and cached) no more.
   */
  idle(namespace: string): boolean;
}

interface Confirmation {
  resourceVersion: string;
  at: number;
}

export class ShardMembership {
  private readonly clock: Clock;
  private self: ShardSelf;
  private readonly acting = new Set<string>();
  /** The markers this replica wrote, as they stand after its write: the planner's confirmedAt. */
  private readonly confirmed = new Map<string, Confirmation>();
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private started = false;
  private lastPlan: OwnershipPlan | undefined;

  constructor(private readonly o: ShardMembershipOptions) {
    if (!(o.leaseDurationMs > o.renewDeadlineMs))
      throw new Error("shards: lease duration must be greater than renew deadline");
    if (!(o.renewDeadlineMs > o.retryPeriodMs))
      throw new Error("shards: renew deadline must be greater than retry period");
    if (!(o.skewMarginMs >= 0)) throw new Error("shards: skew margin must be >= 0");
    if (!o.identity) throw new Error("shards: identity must not be empty");
    this.clock = o.clock ?? realClock;
    this.self = { identity: o.identity, renewDeadlineMs: o.renewDeadlineMs };
  }

  get identity(): string {
    return this.o.identity;
  }

  /** True only while the namespace's marker names this replica, confirmed in this term, and it is not fenced at this instant. */
  ownsNamespace(namespace: string): boolean {
    return this.acting.has(namespace) && !isFenced(this.self, this.clock.now());
  }

  /** The namespaces acted on now, sorted. */
  owned(): string[] {
    return isFenced(this.self, this.clock.now()) ? [] : [...this.acting].sort();
  }

  /** The last plan, for /debug and logs. */
  plan(): OwnershipPlan | undefined {
    return this.lastPlan;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  /** Runs one round now (tests drive rounds by hand). */
  async tick(): Promise<void> {
    if (this.stopped) return;
    await this.renew();
    if (this.stopped) return;
    try {
      // The clock first, then the fresh reads: every renewal answered before now is in them.
      const now = this.clock.now();
      const [shards, markers] = await Promise.all([this.o.store.listShards(), this.o.store.listMarkers()]);
      if (this.stopped) return;
      const byNamespace = new Map(markers.map((m) => [m.namespace, m]));
      // A namespace whose marker still names us is planned too, so we release it when it is not ours any more.
      const marked = this.o.caches ? markers : markers.filter((m) => m.holder === this.o.identity);
      const namespaces = new Set([...this.o.namespaces(), ...marked.map((m) => m.namespace)]);
      const input = {
        self: this.self,
        shards,
        namespaces: [...namespaces],
        markers: this.handoverMarkers(byNamespace),
        now,
        skewMarginMs: this.o.skewMarginMs,
      };
      const plan = planOwnership(input);
      this.lastPlan = plan;
      const cached = this.o.caches ? namespacesToCache(input, plan) : [];
      await this.follow(cached);
      await this.apply(plan, byNamespace);
      // What was released in this round is acted on no more and acknowledged: its caches go.
      await this.follow(cached);
    } catch (err) {
      this.o.logger?.warn({ identity: this.o.identity, err }, "shard membership round failed");
    }
    this.o.onOwned?.(this.owned().length);
  }

  /** Stops acting, waits for writes in flight, hands every marker it holds back and deletes its shard Lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    await this.running;
    const held = [...this.acting];
    for (const ns of held) this.lose(ns);
    try {
      const markers = await this.o.store.listMarkers();
      await Promise.all(markers.filter((m) => m.holder === this.o.identity).map((m) => this.release(m.namespace, m)));
      await this.o.store.retire(this.o.identity);
    } catch (err) {
      this.o.logger?.warn(
        { identity: this.o.identity, err },
        "handing shards back failed; they move once the shard Lease expires",
      );
    }
    this.o.onOwned?.(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.running = this.tick().finally(() => {
        this.running = undefined;
        this.schedule(this.o.retryPeriodMs);
      });
    }, ms);
  }

  private async renew(): Promise<void> {
    const startedAt = this.clock.now();
    try {
      await this.o.store.renew(this.o.identity, startedAt, this.o.leaseDurationMs);
      this.self = renewalAnswered(this.self, startedAt, this.clock.now());
    } catch (err) {
      this.o.logger?.warn({ identity: this.o.identity, err }, "renewing shard Lease failed");
    }
    // Fenced: act on nothing from this instant (ownsNamespace already says so), and let the parts know.
    if (isFenced(this.self, this.clock.now())) for (const ns of [...this.acting]) this.lose(ns);
  }

  private handoverMarkers(markers: ReadonlyMap<string, MarkerRecord>): Map<string, HandoverMarker> {
    const out = new Map<string, HandoverMarker>();
    for (const [ns, m] of markers) {
      const mine = this.confirmed.get(ns);
      out.set(
        ns,
        mine && mine.resourceVersion === m.resourceVersion
          ? { holder: m.holder, confirmedAt: mine.at }
          : { holder: m.holder },
      );
    }
    return out;
  }

  private async apply(plan: OwnershipPlan, markers: ReadonlyMap<string, MarkerRecord>): Promise<void> {
    const owned = new Set(plan.owned);
    for (const ns of [...this.acting]) if (!owned.has(ns)) this.lose(ns);
    // Owned and confirmed in this term, but not acted on yet (an acquire answered just as a renewal lapsed).
    for (const ns of plan.owned)
      if (!this.acting.has(ns) && (this.o.caches?.synced(ns) ?? true)) this.gain(ns, "confirmed in this term");
    const idle = this.o.caches
      ? plan.owned.filter((ns) => this.acting.has(ns) && this.o.caches!.synced(ns) && this.o.caches!.idle(ns))
      : [];
    await Promise.all([
      ...plan.release.map((ns) => this.release(ns, markers.get(ns))),
      ...plan.acquire.map((ns) => this.acquire(ns, markers.get(ns))),
      ...idle.map((ns) => this.retire(ns, markers.get(ns))),
    ]);
  }

  /** Like a release, but the acknowledgement deletes the marker: nothing is left to hand over. */
  private async retire(namespace: string, marker: MarkerRecord | undefined): Promise<void> {
    if (!marker) return;
    this.lose(namespace);
    await this.o.writesSettled?.(namespace);
    const deleted = await this.o.store.deleteMarker(namespace, marker.resourceVersion);
    this.confirmed.delete(namespace);
    if (deleted === "deleted")
      this.o.logger?.info({ identity: this.o.identity, namespace }, "retired the marker of a namespace left idle");
  }

  /** The caches follow what this replica acts on and what it owns or is about to (fenced or not: a lapse need not cost a relist). */
  private async follow(namespaces: readonly string[]): Promise<void> {
    if (!this.o.caches || this.stopped) return;
    await this.o.caches.follow(new Set([...this.acting, ...namespaces]));
  }

  private lose(namespace: string): void {
    if (!this.acting.delete(namespace)) return;
    this.o.logger?.info({ identity: this.o.identity, namespace }, "stopped acting on namespace");
    this.o.onLost?.(namespace);
  }

  private async release(namespace: string, marker: MarkerRecord | undefined): Promise<void> {
    this.lose(namespace);
    if (!marker) return;
    // Every write already sent for the namespace is answered before the next owner may start.
    await this.o.writesSettled?.(namespace);
    const written = await this.o.store.writeMarker(namespace, "", marker.resourceVersion);
    this.confirmed.delete(namespace);
    if (written !== "conflict") this.o.logger?.info({ identity: this.o.identity, namespace }, "released namespace");
  }

  private async acquire(namespace: string, marker: MarkerRecord | undefined): Promise<void> {
    // Nothing is decided from a partial cache: a namespace whose caches are still listing is taken at a later round.
    if (this.o.caches && !this.o.caches.synced(namespace)) return;
    const written = await this.o.store.writeMarker(namespace, this.o.identity, marker?.resourceVersion);
    if (written === "conflict") return;
    const at = this.clock.now();
    this.confirmed.set(namespace, { resourceVersion: written.resourceVersion, at });
    if (isFenced(this.self, at) || this.acting.has(namespace)) return;
    this.gain(namespace, `acquired from ${JSON.stringify(marker?.holder ?? "")}`);
  }

  private gain(namespace: string, why: string): void {
    if (this.stopped) return;
    this.acting.add(namespace);
    this.o.logger?.info({ identity: this.o.identity, namespace, why }, "acting on namespace");
    this.o.onGained?.(namespace);
  }
}
