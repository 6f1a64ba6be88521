// Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics, plus fencing:
// isLeader() turns false once a renewal has not succeeded within renewDeadline, which is
// strictly before any other replica can consider the lease expired (leaseDuration).
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { realClock, type Clock, type TimerHandle } from "./clock.js";
import type { LogSink } from "./logger.js";

/** The Lease fields leader election reads and writes; times are epoch milliseconds. */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: number;
  renewTime?: number;
  leaseTransitions: number;
  /** Opaque version for optimistic concurrency; set by the store. */
  resourceVersion?: string;
}

export interface LeaseStore {
  get(): Promise<LeaseRecord | undefined>;
  /** Throws LeaseConflictError when the lease already exists. */
  create(lease: LeaseRecord): Promise<LeaseRecord>;
  /** Throws LeaseConflictError when lease.resourceVersion is stale. */
  update(lease: LeaseRecord): Promise<LeaseRecord>;
}

export class LeaseConflictError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LeaseConflictError";
  }
}

/** hostname plus a random suffix, so two replicas on one host (or a restarted pod) never share an identity. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomBytes(4).toString("hex")}`;
}

export interface LeaderElectorOptions {
  store: LeaseStore;
  identity: string;
  clock?: Clock;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Extra random wait on acquire retries, as a fraction of retryPeriod (client-go uses 1.2). */
  jitterFactor?: number;
  random?: () => number;
  onStartedLeading?: () => void;
  onStoppedLeading?: () => void;
  /** Called when a different holder is observed (including ""), for logging. */
  onNewLeader?: (identity: string) => void;
  logger?: LogSink;
  metrics?: { leader?: { set(value: number): void } };
}

type Phase = "idle" | "acquiring" | "leading" | "stopped";

export class LeaderElector {
  private readonly store: LeaseStore;
  readonly identity: string;
  private readonly clock: Clock;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly jitterFactor: number;
  private readonly random: () => number;
  private readonly opts: LeaderElectorOptions;

  private phase: Phase = "idle";
  private observed: LeaseRecord | undefined;
  private observedKey = "";
  private observedAt = 0;
  /** Clock time at which the last successful acquire/renew attempt started. */
  private renewedAt = -Infinity;
  private loopTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  private attempt: Promise<void> | undefined;
  private lastSeenHolder: string | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.opts = opts;
    this.store = opts.store;
    this.identity = opts.identity;
    this.clock = opts.clock ?? realClock;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.jitterFactor = opts.jitterFactor ?? 1.2;
    this.random = opts.random ?? Math.random;
    if (!(this.leaseDurationMs > this.renewDeadlineMs))
      throw new Error("leader election: leaseDuration must be greater than renewDeadline");
    if (!(this.renewDeadlineMs > this.retryPeriodMs * this.jitterFactor) && this.jitterFactor > 0) {
      throw new Error("leader election: renewDeadline must be greater than retryPeriod*jitterFactor");
    }
    if (!(this.renewDeadlineMs > this.retryPeriodMs))
      throw new Error("leader election: renewDeadline must be greater than retryPeriod");
    if (!opts.identity) throw new Error("leader election: identity must not be empty");
  }

  /** True only while we hold the lease and renewed it within renewDeadline, by our clock. */
  isLeader(): boolean {
    return this.phase === "leading" && this.clock.now() < this.renewedAt + this.renewDeadlineMs;
  }

  /** The holder we last observed ("" when released, undefined before the first read). */
  observedHolder(): string | undefined {
    return this.observed?.holderIdentity;
  }

  start(): void {
    if (this.phase !== "idle") return;
    this.phase = "acquiring";
    this.schedule(0);
  }

  /** Stops campaigning without touching the lease (it expires on its own). */
  async stop(): Promise<void> {
    const wasLeading = this.phase === "leading";
    this.phase = "stopped";
    this.clearTimers();
    if (wasLeading) this.lostLeadership("stopped");
    await this.attempt;
  }

  /**
   * Stops and, if we hold the lease, hands it over at once: holder "" and a 1 s duration
   * (client-go's ReleaseOnCancel). Fencing turns off before the release is written.
   */
  async release(): Promise<void> {
    const wasLeading = this.phase === "leading";
    await this.stop();
    if (!wasLeading) return;
    const current = this.observed;
    if (!current || current.holderIdentity !== this.identity) return;
    const now = this.clock.now();
    try {
      const released = await this.store.update({
        ...current,
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
      });
      this.observe(released);
      this.opts.logger?.info({ identity: this.identity }, "released leader lease");
    } catch (err) {
      this.opts.logger?.warn({ identity: this.identity, err }, "releasing leader lease failed; it will expire instead");
    }
  }

  private schedule(ms: number): void {
    if (this.phase === "stopped") return;
    if (this.loopTimer !== undefined) this.clock.clearTimeout(this.loopTimer);
    this.loopTimer = this.clock.setTimeout(() => {
      this.loopTimer = undefined;
      this.attempt = this.tick().finally(() => (this.attempt = undefined));
    }, ms);
  }

  private nextWait(): number {
    if (this.phase === "leading") return this.retryPeriodMs;
    const jittered =
      this.retryPeriodMs + (this.jitterFactor > 0 ? this.random() * this.jitterFactor * this.retryPeriodMs : 0);
    // A standby also tries right when the lease it watches expires by its own observation, so a
    // takeover does not wait for the next jittered retry; never earlier, so never two leaders.
    const held = this.observed && this.observed.holderIdentity !== "" && this.observed.holderIdentity !== this.identity;
    if (!held) return jittered;
    const untilExpiry = this.observedExpiry(this.observed!) - this.clock.now() + 1;
    return Math.max(1, Math.min(jittered, untilExpiry));
  }

  private async tick(): Promise<void> {
    if (this.phase === "stopped") return;
    const startedAt = this.clock.now();
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew(startedAt);
    } catch (err) {
      this.opts.logger?.warn({ identity: this.identity, err }, "leader lease read or write failed");
    }
    // stop() may have run while the attempt was awaited.
    if ((this.phase as Phase) === "stopped") return;

    if (ok) {
      // A success that arrives after the deadline does not extend anything: renewedAt is the attempt's start.
      this.renewedAt = Math.max(this.renewedAt, startedAt);
      if (this.phase === "acquiring" && this.clock.now() < startedAt + this.renewDeadlineMs) {
        this.phase = "leading";
        this.opts.metrics?.leader?.set(1);
        this.opts.logger?.info({ identity: this.identity }, "acquired leader lease");
        this.armDeadline();
        this.opts.onStartedLeading?.();
      } else if (this.phase === "leading") {
        this.armDeadline();
      }
    } else if (this.phase === "leading" && this.observed && this.observed.holderIdentity !== this.identity) {
      this.lostLeadership(`lease is held by ${JSON.stringify(this.observed.holderIdentity)}`);
    }
    if (this.phase === "leading" && !this.isLeader()) this.lostLeadership("renew deadline passed");
    this.schedule(this.nextWait());
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    const due = this.renewedAt + this.renewDeadlineMs - this.clock.now();
    this.deadlineTimer = this.clock.setTimeout(
      () => {
        this.deadlineTimer = undefined;
        if (this.phase !== "leading") return;
        // Node's timers can fire a millisecond before Date.now() reaches the deadline: wait for it
        // again, or onStoppedLeading would lag isLeader() until the next tick.
        if (this.isLeader()) this.armDeadline();
        else this.lostLeadership("renew deadline passed");
      },
      Math.max(1, due),
    );
  }

  private lostLeadership(why: string): void {
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    if (this.phase === "leading") this.phase = "acquiring";
    this.renewedAt = -Infinity;
    this.opts.metrics?.leader?.set(0);
    this.opts.logger?.warn({ identity: this.identity, why }, "lost leader lease");
    this.opts.onStoppedLeading?.();
  }

  private clearTimers(): void {
    if (this.loopTimer !== undefined) this.clock.clearTimeout(this.loopTimer);
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    this.loopTimer = undefined;
    this.deadlineTimer = undefined;
  }

  private observe(record: LeaseRecord): void {
    const key = JSON.stringify([
      record.holderIdentity,
      record.leaseDurationSeconds,
      record.acquireTime,
      record.renewTime,
      record.leaseTransitions,
      record.resourceVersion,
    ]);
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAt = this.clock.now();
    }
    this.observed = record;
    if (record.holderIdentity !== this.lastSeenHolder) {
      this.lastSeenHolder = record.holderIdentity;
      this.opts.onNewLeader?.(record.holderIdentity);
    }
  }

  /** When the observed lease expires. Judged from when WE saw the record change, not from the remote renewTime: clocks differ. */
  private observedExpiry(record: LeaseRecord): number {
    const durationMs = record.leaseDurationSeconds > 0 ? record.leaseDurationSeconds * 1000 : this.leaseDurationMs;
    return this.observedAt + durationMs;
  }

  private async tryAcquireOrRenew(now: number): Promise<boolean> {
    const fresh: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };

    const current = await this.store.get();
    if ((this.phase as Phase) === "stopped") return false;
    if (!current) return this.write(() => this.store.create(fresh));

    this.observe(current);
    const held = current.holderIdentity !== "" && current.holderIdentity !== this.identity;
    if (held && this.observedExpiry(current) > this.clock.now()) return false;

    const ours = current.holderIdentity === this.identity;
    const next: LeaseRecord = {
      ...current,
      holderIdentity: this.identity,
      leaseDurationSeconds: fresh.leaseDurationSeconds,
      renewTime: now,
      acquireTime: ours ? current.acquireTime : now,
      leaseTransitions: ours ? current.leaseTransitions : current.leaseTransitions + 1,
    };
    return this.write(() => this.store.update(next));
  }

  /** A Lease write another replica may have beaten us to: false on a conflict, true once written and observed. */
  private async write(send: () => Promise<LeaseRecord>): Promise<boolean> {
    try {
      this.observe(await send());
      return true;
    } catch (err) {
      if (err instanceof LeaseConflictError) return false;
      throw err;
    }
  }
}
