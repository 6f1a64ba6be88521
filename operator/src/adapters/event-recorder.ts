// Kubernetes Events through events.k8s.io/v1, aggregated into series the way client-go's
// tools/events does: the first occurrence creates an Event; repeats within the series window
// only bump an in-memory count, which a heartbeat writes back (at most one patch per series per
// heartbeat). A per-object token bucket caps API writes, and only the leader writes at all.
import { realClock, type Clock, type TimerHandle } from "../runtime/clock.js";
import type { LogSink } from "../runtime/logger.js";
import { kubeEventSink, type EventInput, type EventSink, type EventsV1Event, type ObjectRef } from "./event-sink.js";
import { isNotFound, isRetryable } from "./kube-errors.js";

export type { EventInput, EventSink, EventsV1Event, ObjectRef };
export { kubeEventSink };

export interface EventRecorderOptions {
  sink: EventSink;
  /** reportingInstance: the elector identity of this replica. */
  identity: string;
  reportingController?: string;
  clock?: Clock;
  /** How long a series stays open after its last occurrence (client-go: 6 min). */
  seriesWindowMs?: number;
  /** How often pending series counts are written (at most one patch per series per heartbeat). */
  heartbeatMs?: number;
  /** Per regarding object: API writes allowed in a burst, and the refill interval of one more. */
  burst?: number;
  refillMs?: number;
  /** Attempts for a write that fails with a retryable error, one per heartbeat. */
  maxTries?: number;
  /** Series kept in memory at most; new ones beyond it are dropped. */
  maxSeries?: number;
  /**
   * API writes in flight at most (default 4); the rest wait their turn. A thousand pods drained
   * at once are two thousand Events: without a bound each would open a connection of its own.
   */
  maxConcurrentWrites?: number;
  writable?: boolean;
  logger?: LogSink;
  metrics?: { eventWrites?: { inc(): void } };
}

export interface EventRecorderStats {
  creates: number;
  patches: number;
  dropped: number;
  failed: number;
}

interface Series {
  namespace: string;
  objectKey: string;
  base: EventInput;
  firstAt: number;
  lastObservedAt: number;
  count: number;
  /** Count the server has; 0 until created. */
  written: number;
  name?: string;
  inFlight: boolean;
  tries: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const NOTE_MAX_BYTES = 1024;

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= NOTE_MAX_BYTES) return note;
  let out = note.slice(0, NOTE_MAX_BYTES);
  while (Buffer.byteLength(out) > NOTE_MAX_BYTES - 3) out = out.slice(0, -1);
  return `${out}...`;
}

function refKey(r: ObjectRef | undefined): string {
  return r ? [r.apiVersion, r.kind, r.namespace ?? "", r.name, r.uid ?? ""].join("|") : "";
}

export class EventRecorder {
  private readonly sink: EventSink;
  private readonly identity: string;
  private readonly reportingController: string;
  private readonly clock: Clock;
  private readonly seriesWindowMs: number;
  private readonly heartbeatMs: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly maxTries: number;
  private readonly maxSeries: number;
  private readonly maxConcurrentWrites: number;
  private writing = 0;
  private readonly waitingToWrite: Array<() => void> = [];
  private readonly logger?: LogSink;
  private readonly metrics?: EventRecorderOptions["metrics"];

  private writable: boolean;
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly inFlight = new Set<Promise<void>>();
  private heartbeat: TimerHandle | undefined;
  private seq = 0;
  private stopped = false;
  private readonly counters: EventRecorderStats = { creates: 0, patches: 0, dropped: 0, failed: 0 };

  constructor(opts: EventRecorderOptions) {
    this.sink = opts.sink;
    this.identity = opts.identity;
    this.reportingController = opts.reportingController ?? "healthprobe.io/operator";
    this.clock = opts.clock ?? realClock;
    this.seriesWindowMs = opts.seriesWindowMs ?? 6 * 60_000;
    this.heartbeatMs = opts.heartbeatMs ?? 30_000;
    this.burst = opts.burst ?? 25;
    this.refillMs = opts.refillMs ?? 5 * 60_000;
    this.maxTries = opts.maxTries ?? 12;
    this.maxSeries = opts.maxSeries ?? 4096;
    this.maxConcurrentWrites = Math.max(1, opts.maxConcurrentWrites ?? 4);
    this.writable = opts.writable ?? false;
    this.logger = opts.logger;
    this.metrics = opts.metrics;
  }

  /** Only the leader writes: when false, records are dropped and pending series forgotten. */
  setWritable(writable: boolean): void {
    this.writable = writable;
    if (!writable) {
      this.series.clear();
      this.stopHeartbeat();
    }
  }

  isWritable(): boolean {
    return this.writable;
  }

  stats(): EventRecorderStats {
    return { ...this.counters };
  }

  /** Records one occurrence; never throws and never waits on the API. */
  record(input: EventInput): void {
    if (!this.writable || this.stopped) {
      this.counters.dropped++;
      return;
    }
    const event: EventInput = { ...input, note: truncateNote(input.note) };
    const key = JSON.stringify([
      event.type,
      event.action,
      event.reason,
      event.note,
      this.reportingController,
      this.identity,
      refKey(event.regarding),
      refKey(event.related),
    ]);
    const now = this.clock.now();
    const existing = this.series.get(key);
    if (existing && now - existing.lastObservedAt <= this.seriesWindowMs) {
      existing.count++;
      existing.lastObservedAt = now;
      this.ensureHeartbeat();
      return;
    }
    if (this.series.size >= this.maxSeries && !existing) {
      this.counters.dropped++;
      return;
    }
    const objectKey = refKey(event.regarding);
    // The spam filter drops a new Event outright; a pending series count waits for a token instead.
    if (!this.takeToken(objectKey, now)) {
      this.counters.dropped++;
      this.logger?.debug(
        { regarding: event.regarding, reason: event.reason },
        "event dropped by the per-object rate limit",
      );
      return;
    }
    const s: Series = {
      namespace: event.regarding.namespace || "default",
      objectKey,
      base: event,
      firstAt: now,
      lastObservedAt: now,
      count: 1,
      written: 0,
      inFlight: false,
      tries: 0,
    };
    this.series.set(key, s);
    this.write(s, now);
    this.ensureHeartbeat();
  }

  /** Writes every pending series count now (token bucket permitting) and waits for in-flight writes. */
  async flush(): Promise<void> {
    await this.idle();
    const now = this.clock.now();
    for (const s of this.series.values()) {
      if (s.count !== s.written && this.takeToken(s.objectKey, now)) this.write(s, now);
    }
    await this.idle();
  }

  /** Resolves when no write is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  async stop(): Promise<void> {
    if (this.writable) await this.flush();
    this.stopped = true;
    this.stopHeartbeat();
    await this.idle();
  }

  /** Resolves when fewer than maxConcurrentWrites writes are under way (queued writes count as in flight for idle()). */
  private writeSlot(): Promise<void> {
    if (this.writing < this.maxConcurrentWrites) {
      this.writing++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waitingToWrite.push(resolve));
  }

  /** Hands the slot to the next waiting write, if any. */
  private releaseWriteSlot(): void {
    const next = this.waitingToWrite.shift();
    if (next) next();
    else this.writing--;
  }

  private takeToken(objectKey: string, now: number): boolean {
    const b = this.buckets.get(objectKey) ?? { tokens: this.burst, at: now };
    const refilled = Math.min(this.burst, b.tokens + (now - b.at) / this.refillMs);
    if (refilled < 1) {
      this.buckets.set(objectKey, { tokens: refilled, at: now });
      return false;
    }
    this.buckets.set(objectKey, { tokens: refilled - 1, at: now });
    return true;
  }

  private eventName(s: Series, now: number): string {
    // client-go names Events "<regarding name>.<hex nanoseconds>"; the sequence keeps same-millisecond names apart.
    const nanos = BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    return `${s.base.regarding.name.slice(0, 200)}.${nanos.toString(16)}`;
  }

  private toEvent(s: Series, name: string): EventsV1Event {
    const e = s.base;
    const body: EventsV1Event = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name, namespace: s.namespace },
      eventTime: microTime(s.firstAt),
      reportingController: this.reportingController,
      reportingInstance: this.identity,
      action: e.action,
      reason: e.reason,
      type: e.type,
      note: e.note,
      regarding: { ...e.regarding },
    };
    if (e.related) body.related = { ...e.related };
    if (s.count > 1) body.series = { count: s.count, lastObservedTime: microTime(s.lastObservedAt) };
    return body;
  }

  private write(s: Series, now: number): void {
    if (s.inFlight) return;
    s.inFlight = true;
    const target = s.count;
    const lastObservedAt = s.lastObservedAt;
    const op = (async () => {
      await this.writeSlot();
      try {
        if (s.name) {
          try {
            this.metrics?.eventWrites?.inc();
            this.counters.patches++;
            await this.sink.patchSeries(s.namespace, s.name, {
              count: target,
              lastObservedTime: microTime(lastObservedAt),
            });
          } catch (err) {
            if (!isNotFound(err)) throw err;
            // The Event expired or was deleted: start it again, carrying the series (as client-go does).
            s.name = undefined;
          }
        }
        if (!s.name) {
          const name = this.eventName(s, now);
          this.metrics?.eventWrites?.inc();
          this.counters.creates++;
          await this.sink.create(s.namespace, this.toEvent(s, name));
          s.name = name;
        }
        s.written = Math.max(s.written, target);
        s.tries = 0;
      } catch (err) {
        s.tries++;
        this.counters.failed++;
        if (!isRetryable(err) || s.tries >= this.maxTries) {
          // The server rejected it or kept failing: abandon this count rather than retrying forever.
          s.written = s.count;
          this.logger?.warn(
            { err, reason: s.base.reason, regarding: s.base.regarding },
            "writing event failed; giving up",
          );
        } else {
          this.logger?.debug({ err, reason: s.base.reason, tries: s.tries }, "writing event failed; will retry");
        }
      } finally {
        s.inFlight = false;
        this.releaseWriteSlot();
      }
    })();
    this.inFlight.add(op);
    void op.finally(() => this.inFlight.delete(op));
  }

  private ensureHeartbeat(): void {
    if (this.heartbeat !== undefined || this.stopped) return;
    this.heartbeat = this.clock.setTimeout(() => this.beat(), this.heartbeatMs);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== undefined) this.clock.clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
  }

  private beat(): void {
    this.heartbeat = undefined;
    if (!this.writable || this.stopped) return;
    const now = this.clock.now();
    for (const [key, s] of this.series) {
      const pending = s.count !== s.written;
      if (pending && !s.inFlight && (s.name || s.tries > 0) && this.takeToken(s.objectKey, now)) this.write(s, now);
      else if (!pending && !s.inFlight && now - s.lastObservedAt > this.seriesWindowMs) this.series.delete(key);
    }
    if (this.series.size > 0) this.ensureHeartbeat();
  }
}
