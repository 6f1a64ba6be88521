// Runs probes: each unique request once per period, spread over the period, never two at once
// for one request, at most maxConcurrent in flight and maxPerNamespace of one namespace (the
// rest queue, in due order within a namespace, round-robin between namespaces: fair-slots.ts).
//
// One min-heap of due times with a single timer: adding, removing or rescheduling a target is
// O(log n), and thousands of targets cost one pending timer.
import { computeProbeOutcome } from "../domain/probe-judgement.js";
import { BinaryHeap } from "./binary-heap.js";
import { BatchGrid } from "./batch-grid.js";
import { FairSlots } from "./fair-slots.js";
import { StartLags, type ProbeSchedulerStats } from "./start-lags.js";
import { EarlyProbePacer } from "./early-probe-pacer.js";
import { realClock, type Clock } from "./clock.js";
import { computeProbeKey } from "../domain/probe-key.js";
import { cappedJudgement } from "../domain/probe-timeout.js";
import type { ProbeJudgement, ProbeOutcome, ProbeRequest, RawProbeResult } from "../domain/probe-request.js";

export type { ProbeSchedulerStats } from "./start-lags.js";

/** Probes a wake-up of the scheduler aims to start (batchMs). */
const BATCH_PROBES = 32;

export interface ProbeTarget {
  /** Pod uid. */
  id: string;
  request: ProbeRequest;
  judgement: ProbeJudgement;
  periodMs: number;
  /**
   * For a request new to the scheduler: its first probe within this many ms instead of a random
   * part of the period (a restored target is serving and should be confirmed soon), as far as
   * earlyPerSecond allows. The probe after it takes a random phase, so the spread stays even. */
  firstWithinMs?: number;
}

export interface ProbeSchedulerOptions {
  execute: (req: ProbeRequest, timeoutMs: number, readBody: boolean) => Promise<RawProbeResult>;
  /** Called once per owner and target for every probe of the target's request. */
  onResult: (owner: string, targetId: string, outcome: ProbeOutcome) => void;
  /**
   * Probes in flight at most, default 2048: a probe of a dead pod holds its slot for its whole
   * timeout, so a small bound lets a few delay every other probe. Each slot is one socket. */
  maxConcurrent?: number;
  /** Probes of one namespace (the owner's, "namespace/name") in flight at most; default maxConcurrent. */
  maxPerNamespace?: number;
  /** --max-probe-timeout: no probe holds its slot longer, whatever its judgement asks; 0: no cap. */
  maxTimeoutMs?: number;
  clock?: Clock;
  /** In [0, 1): places a new request's first probe within its first period. */
  random?: () => number;
  /** How many recent start delays stats() summarises. Default 4096. */
  lagSamples?: number;
  /**
   * Due probes start together on a grid of at least this many ms (default 20; 0 for exact
   * times): one wake-up starts several probes, sharing event-loop turns. At 1,000 probes/s this
   * saves about a third of the CPU per probe. Below BATCH_PROBES × 50 probes/s the grid grows, up
   * to 100 ms and 2% of the shortest period, so a wake-up starts as many (batch-grid.ts). On
   * loopback up to a millisecond of latency is measured while a batch is processed. */
  batchMs?: number;
  /**
   * Early first probes (firstWithinMs) start at most this many per second, default 1,000: a
   * restart restores every target at once, and a burst would take the CPU their own timeouts
   * and the reconciles need. Beyond it they wait, never later than a whole period.
   */
  earlyPerSecond?: number;
}

interface Sub {
  owner: string;
  id: string;
  judgement: ProbeJudgement;
  periodMs: number;
  unit: Unit;
}

interface Unit {
  key: string;
  /** The pod's namespace (its first owner's): whose share of the slots it takes. */
  namespace: string;
  request: ProbeRequest;
  subs: Set<Sub>;
  periodMs: number;
  timeoutMs: number;
  readBody: boolean;
  due: number;
  /** Due time of the probe last started: the phase the next one keeps. */
  lastDue: number | undefined;
  /** Set by probeNow: the due time it brought forward, whose phase the probes after it keep. */
  earlyFrom?: number | undefined;
  heapIndex: number;
  state: "idle" | "queued" | "running";
  /** Started early (firstWithinMs): the next probe takes a random phase in the period. */
  rephase?: boolean;
}

export class ProbeScheduler {
  private readonly execute: ProbeSchedulerOptions["execute"];
  private readonly onResult: ProbeSchedulerOptions["onResult"];
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly grid: BatchGrid;
  private readonly early: EarlyProbePacer;
  private readonly owners = new Map<string, Map<string, Sub>>();
  private readonly units = new Map<string, Unit>();
  private readonly heap = new BinaryHeap<Unit>(
    (a, b) => a.due < b.due,
    (unit, index) => (unit.heapIndex = index),
  );
  private readonly slots: FairSlots<Unit>;
  private readonly maxTimeoutMs: number;
  private timer: unknown;
  private timerDue = Infinity;
  private subCount = 0;
  private stopped = false;
  private readonly lags: StartLags;
  private started = 0;
  private finished = 0;
  private skipped = 0;

  constructor(opts: ProbeSchedulerOptions) {
    this.execute = opts.execute;
    this.onResult = opts.onResult;
    const maxConcurrent = Math.max(1, opts.maxConcurrent ?? 2048);
    this.slots = new FairSlots({ limit: maxConcurrent, perNamespaceLimit: opts.maxPerNamespace ?? maxConcurrent });
    this.maxTimeoutMs = opts.maxTimeoutMs ?? 0;
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.grid = new BatchGrid({ minMs: Math.max(0, opts.batchMs ?? 20), maxMs: 100, perBatch: BATCH_PROBES });
    this.early = new EarlyProbePacer(opts.earlyPerSecond ?? 1000);
    this.lags = new StartLags(opts.lagSamples ?? 4096);
  }

  /** Replaces the owner's targets. Unchanged targets keep their phase; an empty list removes the owner. */
  setTargets(owner: string, targets: ProbeTarget[]): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const old = this.owners.get(owner) ?? new Map<string, Sub>();
    const next = new Map<string, Sub>();
    const touched = new Set<Unit>();
    for (const t of targets) {
      if (next.has(t.id)) continue; // first one wins; ids are pod uids
      // Capped: the engine waits no longer, and a timeout's message says how long it waited.
      const judgement = cappedJudgement(t.judgement, this.maxTimeoutMs);
      const key = computeProbeKey(t.request);
      let sub = old.get(t.id);
      if (sub && sub.unit.key === key) {
        sub.judgement = judgement;
        sub.periodMs = t.periodMs;
      } else {
        if (sub) touched.add(this.detach(sub));
        const unit = this.unitFor(key, owner, t, now);
        sub = { owner, id: t.id, judgement, periodMs: t.periodMs, unit };
        unit.subs.add(sub);
        this.subCount++;
      }
      touched.add(sub.unit);
      next.set(t.id, sub);
    }
    for (const [id, sub] of old) if (!next.has(id)) touched.add(this.detach(sub));
    if (next.size > 0) this.owners.set(owner, next);
    else this.owners.delete(owner);
    for (const unit of touched) this.refresh(unit, now);
    this.arm();
  }

  /**
   * Probes the owner's given targets as soon as possible (the recovery sweep). A request
   * already running or queued is not doubled: its result serves. The phase is kept: the
   * probe after the early one is due when it would have been.
   */
  probeNow(owner: string, ids: readonly string[]): void {
    if (this.stopped) return;
    const now = this.clock.now();
    for (const id of ids) {
      const unit = this.owners.get(owner)?.get(id)?.unit;
      if (!unit || unit.state !== "idle" || unit.due <= now) continue;
      unit.earlyFrom ??= unit.due;
      unit.due = now;
      if (unit.heapIndex >= 0) this.heap.fix(unit.heapIndex);
    }
    this.arm();
  }

  /** Stops scheduling; probes in flight finish but deliver nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Infinity;
    this.heap.clear();
    this.slots.clearWaiting();
  }

  inFlightOf = (namespace: string): number => this.slots.inFlightOf(namespace); // its use of the fair slots now
  stats(): ProbeSchedulerStats {
    const lag = this.lags.summary();
    const oldest = this.slots.heads().reduce((m, u) => Math.min(m, u.due), Infinity);
    return {
      targets: this.subCount,
      uniqueRequests: this.units.size,
      inFlight: this.slots.inFlight,
      queued: this.slots.waiting,
      oldestQueuedMs: oldest === Infinity ? 0 : Math.max(0, this.clock.now() - oldest),
      lagP50Ms: lag.p50,
      lagP99Ms: lag.p99,
      lagMaxMs: lag.max,
      started: this.started,
      finished: this.finished,
      skipped: this.skipped,
    };
  }

  private unitFor(key: string, owner: string, target: ProbeTarget, now: number): Unit {
    let unit = this.units.get(key);
    if (!unit) {
      const { request, periodMs, firstWithinMs } = target;
      const early = firstWithinMs !== undefined && firstWithinMs < periodMs;
      // A random phase spreads new requests over the period; early ones take the next free
      // slot at earlyPerSecond (at once when few wait), never later than a period.
      const due = early ? this.early.slot(now, periodMs) : now + Math.floor(this.random() * periodMs);
      unit = {
        key,
        namespace: owner.slice(0, Math.max(0, owner.indexOf("/"))),
        request,
        subs: new Set(),
        periodMs,
        timeoutMs: 0,
        readBody: false,
        due,
        lastDue: undefined,
        heapIndex: -1,
        state: "idle",
        ...(early ? { rephase: true } : {}),
      };
      this.units.set(key, unit);
      this.grid.add(unit.periodMs);
      this.heap.push(unit);
    }
    return unit;
  }

  private detach(sub: Sub): Unit {
    sub.unit.subs.delete(sub);
    this.subCount--;
    return sub.unit;
  }

  /** Recomputes a unit's period, timeout and body need from its owners, or drops it when none is left. */
  private refresh(unit: Unit, now: number): void {
    if (unit.subs.size === 0) {
      // A queued or running unit is dropped when it comes back, so a re-added target waits for it.
      if (unit.state === "idle") {
        this.heap.removeAt(unit.heapIndex);
        this.dropUnit(unit);
      }
      return;
    }
    let period = Infinity;
    let timeout = 0;
    let readBody = false;
    for (const s of unit.subs) {
      period = Math.min(period, s.periodMs);
      timeout = Math.max(timeout, s.judgement.timeoutMs);
      if (s.judgement.bodyContains) readBody = true;
    }
    unit.timeoutMs = timeout;
    unit.readBody = readBody && unit.request.method === "GET";
    if (period === unit.periodMs) return;
    this.grid.remove(unit.periodMs);
    this.grid.add(period);
    unit.periodMs = period;
    if (unit.state !== "idle") return; // rescheduled from lastDue when it finishes
    const due =
      unit.lastDue === undefined
        ? unit.due > now + period
          ? now + Math.floor(this.random() * period)
          : unit.due
        : Math.max(now, unit.lastDue + period);
    if (due !== unit.due) {
      unit.due = due;
      this.heap.fix(unit.heapIndex);
    }
  }

  private arm(): void {
    if (this.stopped) return;
    const top = this.heap.peek();
    const due = top ? top.due : Infinity;
    if (due === this.timerDue) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = due;
    if (!top) return;
    const grid = this.grid.ms();
    const at = grid > 0 ? Math.ceil(due / grid) * grid : due;
    this.timer = this.clock.setTimeout(() => this.tick(), Math.max(0, at - this.clock.now()));
  }

  private tick(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    if (this.stopped) return;
    const now = this.clock.now();
    for (let top = this.heap.peek(); top && top.due <= now; top = this.heap.peek()) {
      this.heap.pop();
      top.state = "queued";
      this.slots.push(top.namespace, top);
    }
    this.drain(now);
    this.arm();
  }

  private start(unit: Unit, now: number): void {
    unit.state = "running";
    unit.lastDue = unit.earlyFrom !== undefined ? unit.earlyFrom - unit.periodMs : unit.due;
    unit.earlyFrom = undefined;
    this.started++;
    this.lags.record(now - unit.due);
    // Owners present when the probe starts get its result (if still subscribed at the end):
    // one that joins mid-probe may need a body this request does not read.
    const subs = [...unit.subs];
    let p: Promise<RawProbeResult>;
    try {
      p = this.execute(unit.request, unit.timeoutMs, unit.readBody);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(
      (raw) => this.finish(unit, subs, raw),
      (err: unknown) =>
        this.finish(unit, subs, {
          kind: "error",
          failureKind: "other",
          error: `probe error: ${err instanceof Error ? err.message : String(err)}`,
          endAtMs: 0,
          finishedAt: this.clock.now(),
        }),
    );
  }

  private finish(unit: Unit, subs: Sub[], raw: RawProbeResult): void {
    this.slots.release(unit.namespace);
    this.finished++;
    unit.state = "idle";
    if (this.stopped) return;
    for (const sub of subs) {
      if (sub.unit !== unit || !unit.subs.has(sub)) continue;
      try {
        this.onResult(sub.owner, sub.id, computeProbeOutcome(raw, sub.judgement));
      } catch {
        // A failing consumer must not stop probing of everyone else.
      }
    }
    const now = this.clock.now();
    if (unit.subs.size === 0) this.dropUnit(unit);
    else this.reschedule(unit, now);
    this.drain(now);
    this.arm();
  }

  private dropUnit(unit: Unit): void {
    this.units.delete(unit.key);
    this.grid.remove(unit.periodMs);
  }

  private reschedule(unit: Unit, now: number): void {
    // Keep the phase; a period missed while this request was busy or queued is skipped, not doubled up.
    let due = (unit.lastDue ?? now) + unit.periodMs;
    if (unit.rephase) {
      // After an early first probe: half a period to one and a half later, a random phase again.
      unit.rephase = false;
      due = (unit.lastDue ?? now) + Math.floor(unit.periodMs * (0.5 + this.random()));
    }
    while (due + unit.periodMs <= now) {
      due += unit.periodMs;
      this.skipped++;
    }
    unit.due = due;
    this.heap.push(unit);
  }

  private drain(now: number): void {
    for (let unit = this.slots.next(); unit; unit = this.slots.next()) {
      if (unit.subs.size === 0) {
        this.slots.release(unit.namespace);
        unit.state = "idle";
        this.dropUnit(unit);
        continue;
      }
      this.start(unit, now);
    }
  }
}
