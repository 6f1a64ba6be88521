// A model of the sharded operator over random histories, in real time: 2-4 replicas whose clocks
// are apart by at most skewMarginMs, each running two loops as the shell does (renewing its own
// shard Lease; planning and applying the plan's writes), with requests that are lost or answered
// with an error after they took effect, replicas that stall for longer than their lease, join,
// crash or leave. The markers live in one store whose every write is a compare-and-swap on a
// version, applied exactly as planOwnership's header says: acquire = CAS holder to self, then
// act; release = stop acting, then CAS holder "". A replica acts on what its last plan owned
// (and what it acquired since) until its next plan or its fencing deadline, whichever is first.
//
// Safety, checked after every event (the acting sets only shrink between events): no namespace
// is acted on by two replicas at once. Liveness: after a stable spell every namespace has
// exactly one replica acting on it.
import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import {
  planOwnership,
  renewalAnswered,
  type HandoverMarker,
  type ShardLease,
  type ShardSelf,
} from "./shard-ownership.js";

const NAMESPACES = Array.from({ length: 10 }, (_, i) => `team-${i + 1}`);
const MAX_ALIVE = 4;
const START = 1_000_000;

type Outcome = "ok" | "lost" | "late-error";

interface Params {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  skewMarginMs: number;
}

interface StoredMarker extends HandoverMarker {
  version: number;
}

interface Write {
  kind: "acquire" | "release";
  namespace: string;
  /** The version the plan saw; 0 when there was no marker. */
  version: number;
}

interface Replica {
  id: string;
  /** Its clock reads real time + offset; offsets lie within [0, skewMarginMs]. */
  offset: number;
  alive: boolean;
  pausedUntil: number;
  self: ShardSelf;
  /** The renewal in flight: sent at startedAt (its clock), lands at landAt, answered at answerAt (real time). */
  renewal?: { startedAt: number; landAt: number; answerAt: number; outcome: Outcome; landed: boolean };
  writes: Write[];
  acting: Set<string>;
  /** Real time of the fencing deadline that bounds the current acting set. */
  actingUntil: number;
  /** Real time its marker cache reflects; never goes back. */
  cacheAt: number;
}

interface World {
  t: number;
  params: Params;
  leases: Map<string, ShardLease>;
  markers: Map<string, StoredMarker>;
  /** Every state the markers were in, oldest first, for replicas whose cache lags. */
  history: { t: number; markers: ReadonlyMap<string, StoredMarker> }[];
  replicas: Replica[];
  stats: { acquired: number; released: number; conflicts: number };
}

const clock = (w: World, r: Replica): number => w.t + r.offset;

function newReplica(w: World, offset: number): Replica {
  const r: Replica = {
    id: `replica-${w.replicas.length}`,
    offset,
    alive: true,
    pausedUntil: 0,
    self: { identity: `replica-${w.replicas.length}`, renewDeadlineMs: w.params.renewDeadlineMs },
    writes: [],
    acting: new Set(),
    actingUntil: 0,
    cacheAt: 0,
  };
  w.replicas.push(r);
  return r;
}

/** When the next thing the network does for r happens: its renewal lands, or its answer is taken. */
function nextNetworkEvent(r: Replica): number {
  const rn = r.renewal;
  if (!rn) return Infinity;
  if (!rn.landed) return rn.landAt;
  // The renewal loop takes the answer as it arrives, unless the process is stalled or gone.
  return r.alive ? Math.max(rn.answerAt, r.pausedUntil) : Infinity;
}

function networkEvent(w: World, r: Replica): void {
  const rn = r.renewal!;
  if (!rn.landed) {
    rn.landed = true;
    if (rn.outcome !== "lost")
      w.leases.set(r.id, { identity: r.id, renewTime: rn.startedAt, leaseDurationMs: w.params.leaseDurationMs });
    return;
  }
  // A lost request is answered by a timeout; "late-error" took effect but reads as failed.
  if (rn.outcome === "ok") r.self = renewalAnswered(r.self, rn.startedAt, clock(w, r));
  r.renewal = undefined;
}

/** Move real time to `target`, playing every network event due on the way, in order. */
function advanceTo(w: World, target: number): void {
  for (;;) {
    let first: Replica | undefined;
    for (const r of w.replicas)
      if (nextNetworkEvent(r) <= target && (!first || nextNetworkEvent(r) < nextNetworkEvent(first))) first = r;
    if (!first) break;
    w.t = Math.max(w.t, nextNetworkEvent(first));
    networkEvent(w, first);
    assertSafe(w, `a network event for ${first.id}`);
  }
  w.t = target;
}

/** The renewal loop sends its next renewal, reading the clock first; one at a time. */
function sendRenewal(w: World, r: Replica, outcome: Outcome, latency: { landMs: number; answerMs: number }): void {
  if (r.renewal) return;
  const landAt = w.t + latency.landMs;
  r.renewal = { startedAt: clock(w, r), landAt, answerAt: landAt + latency.answerMs, outcome, landed: false };
  advanceTo(w, w.t);
}

/** A renewal that lands and is answered at once (one in flight is hurried along first). */
function renewNow(w: World, r: Replica): void {
  if (r.renewal) r.renewal = { ...r.renewal, landAt: w.t, answerAt: w.t };
  advanceTo(w, w.t);
  sendRenewal(w, r, "ok", { landMs: 0, answerMs: 0 });
}

function fencingDeadline(w: World, r: Replica): number {
  return r.self.renewedAt === undefined ? w.t : r.self.renewedAt + r.self.renewDeadlineMs - r.offset;
}

/** The markers as an informer cache lagging by up to lagMs shows them. */
function cachedMarkers(w: World, r: Replica, lagMs: number): ReadonlyMap<string, StoredMarker> {
  r.cacheAt = Math.max(r.cacheAt, w.t - lagMs);
  let seen: ReadonlyMap<string, StoredMarker> = new Map();
  for (const h of w.history) if (h.t <= r.cacheAt) seen = h.markers;
  return seen;
}

/**
 * Gather (the clock first, then the shard Leases from the store, the markers from a cache that
 * may lag), plan once, act on `owned` only, queue the writes.
 */
function plan(w: World, r: Replica, lagMs: number): void {
  const now = clock(w, r);
  const seen = cachedMarkers(w, r, lagMs);
  const markers = new Map([...seen].map(([ns, m]) => [ns, { holder: m.holder, confirmedAt: m.confirmedAt }]));
  const p = planOwnership({
    self: r.self,
    shards: [...w.leases.values()],
    namespaces: NAMESPACES,
    markers,
    now,
    skewMarginMs: w.params.skewMarginMs,
  });
  // Releases stop acting here, before their write: `owned` never lists them.
  r.acting = new Set(p.owned);
  r.actingUntil = fencingDeadline(w, r);
  const version = (ns: string) => seen.get(ns)?.version ?? 0;
  r.writes = [
    ...p.release.map((ns): Write => ({ kind: "release", namespace: ns, version: version(ns) })),
    ...p.acquire.map((ns): Write => ({ kind: "acquire", namespace: ns, version: version(ns) })),
  ];
}

function applyWrite(w: World, r: Replica, write: Write, outcome: Outcome): void {
  if (outcome === "lost") return;
  const current = w.markers.get(write.namespace);
  if ((current?.version ?? 0) !== write.version) {
    w.stats.conflicts += 1;
    return;
  }
  const acquire = write.kind === "acquire";
  w.markers.set(write.namespace, {
    holder: acquire ? r.id : "",
    confirmedAt: acquire ? clock(w, r) : undefined,
    version: write.version + 1,
  });
  w.history.push({ t: w.t, markers: new Map(w.markers) });
  if (acquire) w.stats.acquired += 1;
  else w.stats.released += 1;
  // Acting starts only once the conditional write is known to have succeeded.
  if (acquire && outcome === "ok") r.acting.add(write.namespace);
}

function planStep(w: World, r: Replica, outcome: Outcome, lagMs: number): void {
  const next = r.writes.shift();
  if (next) applyWrite(w, r, next, outcome);
  else plan(w, r, lagMs);
}

function actors(w: World, ns: string): string[] {
  return w.replicas.filter((r) => r.alive && r.acting.has(ns) && w.t < r.actingUntil).map((r) => r.id);
}

function describeWorld(w: World): string {
  const reps = w.replicas.map(
    (r) =>
      `${r.id}${r.alive ? "" : "(gone)"} offset=${r.offset} renewedAt=${r.self.renewedAt} termStart=${r.self.termStart} acting=[${[...r.acting]}] until=${r.actingUntil}`,
  );
  const marks = [...w.markers].map(([ns, m]) => `${ns}:${m.holder || '""'}@${m.confirmedAt}v${m.version}`);
  return `t=${w.t} clocks(real+offset)\n  ${reps.join("\n  ")}\n  leases ${[...w.leases.values()].map((l) => `${l.identity}@${l.renewTime}`).join(" ")}\n  markers ${marks.join(" ")}`;
}

function assertSafe(w: World, event: string): void {
  for (const ns of NAMESPACES) {
    const who = actors(w, ns);
    if (who.length > 1) throw new Error(`${ns} acted on by ${who.join(" and ")} after ${event}\n${describeWorld(w)}`);
  }
}

type Step =
  | { kind: "renew"; who: number; advanceMs: number; outcome: Outcome; landMs: number; answerMs: number }
  | { kind: "plan"; who: number; advanceMs: number; outcome: Outcome; lagMs: number }
  | { kind: "hang"; who: number; sendShare: number; landShare: number; answerShare: number }
  | { kind: "pause"; who: number; advanceMs: number; pauseMs: number }
  | { kind: "join"; advanceMs: number; offsetShare: number }
  | { kind: "leave"; who: number; advanceMs: number; graceful: boolean };

const advanceArb = fc.integer({ min: 0, max: 2500 });
// Mostly quick, sometimes hanging for longer than any lease.
const latencyArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 30_000 }) },
);
const outcomeArb = fc.constantFrom<Outcome>("ok", "ok", "ok", "ok", "lost", "late-error");
// Mostly fresh; sometimes an informer stuck for about a lease, showing markers from before a handover.
const lagArb = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 2_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 30_000 }) },
);
const share = fc.double({ min: 0, max: 1, noNaN: true });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("renew" as const),
      who: fc.nat(),
      advanceMs: advanceArb,
      outcome: outcomeArb,
      landMs: latencyArb,
      answerMs: latencyArb,
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("plan" as const),
      who: fc.nat(),
      advanceMs: advanceArb,
      outcome: outcomeArb,
      lagMs: lagArb,
    }),
  },
  // A renewal sent late in its term that hangs around the lease's expiry: answered late, or not.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("hang" as const),
      who: fc.nat(),
      sendShare: share,
      landShare: share,
      answerShare: share,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("pause" as const),
      who: fc.nat(),
      advanceMs: advanceArb,
      pauseMs: fc.integer({ min: 0, max: 40_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("join" as const),
      advanceMs: advanceArb,
      offsetShare: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("leave" as const),
      who: fc.nat(),
      advanceMs: advanceArb,
      graceful: fc.boolean(),
    }),
  },
);

const paramsArb = fc
  .record({
    leaseDurationMs: fc.integer({ min: 6_000, max: 20_000 }),
    deadlineShare: fc.double({ min: 0.3, max: 0.95, noNaN: true }),
    skewMarginMs: fc.integer({ min: 0, max: 3_000 }),
  })
  .map(({ leaseDurationMs, deadlineShare, skewMarginMs }): Params => ({
    leaseDurationMs,
    renewDeadlineMs: Math.max(1, Math.floor(leaseDurationMs * deadlineShare)),
    skewMarginMs,
  }));

const runArb = fc.record({
  params: paramsArb,
  offsetShares: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: MAX_ALIVE }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 160 }),
});

function aliveReplicas(w: World): Replica[] {
  return w.replicas.filter((r) => r.alive);
}

/** Scaled to the lease so that the rare window (sent before, answered after the fencing deadline) is drawn often. */
function hang(w: World, r: Replica, step: Extract<Step, { kind: "hang" }>): void {
  const { leaseDurationMs, renewDeadlineMs, skewMarginMs } = w.params;
  const renewedAt = r.self.renewedAt ?? clock(w, r);
  advanceTo(w, Math.max(w.t, renewedAt - r.offset + Math.floor(step.sendShare * renewDeadlineMs)));
  if (w.t < r.pausedUntil) return;
  sendRenewal(w, r, "ok", {
    landMs: Math.floor(step.landShare * (leaseDurationMs + skewMarginMs + renewDeadlineMs)),
    answerMs: Math.floor(step.answerShare * renewDeadlineMs),
  });
}

function runStep(w: World, step: Step): void {
  advanceTo(w, w.t + (step.kind === "hang" ? 0 : step.advanceMs));
  const alive = aliveReplicas(w);
  if (step.kind === "join") {
    if (alive.length < MAX_ALIVE) newReplica(w, Math.floor(step.offsetShare * w.params.skewMarginMs));
    return;
  }
  const r = alive[step.who % alive.length]!;
  if (step.kind === "leave") {
    if (alive.length === 1) return;
    // A crash and a clean exit both stop acting at once; a clean exit also deletes its shard Lease.
    r.alive = false;
    r.acting.clear();
    if (step.graceful) w.leases.delete(r.id);
  } else if (step.kind === "hang") {
    hang(w, r, step);
  } else if (step.kind === "pause") {
    r.pausedUntil = Math.max(r.pausedUntil, w.t + step.pauseMs);
  } else if (w.t >= r.pausedUntil) {
    if (step.kind === "renew") sendRenewal(w, r, step.outcome, step);
    else planStep(w, r, step.outcome, step.lagMs);
  }
}

/** Everyone renews and plans every second, every request succeeds. */
function stableRound(w: World): void {
  advanceTo(w, w.t + 1_000);
  for (const r of aliveReplicas(w)) {
    r.pausedUntil = 0;
    renewNow(w, r);
    assertSafe(w, `${r.id} renewed`);
    while (r.writes.length > 0) planStep(w, r, "ok", 0);
    plan(w, r, 0);
    assertSafe(w, `${r.id} planned`);
    while (r.writes.length > 0) {
      planStep(w, r, "ok", 0);
      assertSafe(w, `${r.id} wrote`);
    }
  }
}

function newWorld(params: Params, offsetShares: readonly number[]): World {
  const w: World = {
    t: START,
    params,
    leases: new Map(),
    markers: new Map(),
    history: [],
    replicas: [],
    stats: { acquired: 0, released: 0, conflicts: 0 },
  };
  for (const share of offsetShares) newReplica(w, Math.floor(share * params.skewMarginMs));
  return w;
}

describe("shard ownership over random histories (property)", () => {
  it("no namespace is ever acted on by two replicas at once, and after a stable spell each has exactly one", () => {
    fc.assert(
      fc.property(runArb, ({ params, offsetShares, steps }) => {
        const w = newWorld(params, offsetShares);
        steps.forEach((step, i) => {
          runStep(w, step);
          assertSafe(w, `step ${i} (${JSON.stringify(step)})`);
        });
        // Long enough for a crashed replica's Lease to expire (lease + skew) and the handover after it.
        const rounds = Math.ceil((params.leaseDurationMs + params.skewMarginMs) / 1_000) + 5;
        for (let i = 0; i < rounds; i++) stableRound(w);
        for (const ns of NAMESPACES) expect({ ns, actors: actors(w, ns).length }).toEqual({ ns, actors: 1 });
      }),
      { numRuns: 60 },
    );
  });
});

function settle(w: World, r: Replica): void {
  renewNow(w, r);
  plan(w, r, 0);
  while (r.writes.length > 0) planStep(w, r, "ok", 0);
  plan(w, r, 0);
}

describe("shard ownership, one history written out", () => {
  it("a renewal answered after the fencing deadline starts a new term, so a stale cached marker is re-confirmed, not acted on", () => {
    const w = newWorld({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, skewMarginMs: 0 }, [0, 0]);
    const [a, b] = w.replicas as [Replica, Replica];
    settle(w, a);
    settle(w, b);
    settle(w, a);
    const ns = [...a.acting][0]!;
    expect(ns).toBeDefined();
    // a sends its next renewal in time, but the request hangs past its lease.
    advanceTo(w, w.t + 9_000);
    sendRenewal(w, a, "ok", { landMs: 8_000, answerMs: 1_000 });
    advanceTo(w, w.t + 6_001);
    settle(w, b);
    while (b.writes.length > 0) planStep(w, b, "ok", 0);
    expect(actors(w, ns)).toEqual([b.id]);
    // The renewal lands and is answered 3 s later, within renewDeadline of when it was sent.
    advanceTo(w, w.t + 3_000);
    expect(a.self.renewedAt).toBe(START + 9_000);
    // a's cache still shows the marker as a confirmed it before the lapse.
    plan(w, a, 18_000);
    assertSafe(w, "a planned from its lagging cache");
    expect(a.acting.has(ns)).toBe(false);
  });
});
