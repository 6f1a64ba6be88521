import { describe, expect, it } from "@jest/globals";
import type { ProbeJudgement, ProbeOutcome, ProbeRequest, RawProbeResult } from "../domain/probe-request.js";
import type { Clock } from "./clock.js";
import { ProbeScheduler, type ProbeTarget } from "./probe-scheduler.js";

/** A clock whose timers fire only when the test advances it. */
class FakeClock implements Clock {
  private t = 1_000_000;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  pendingTimers(): number {
    return this.timers.size;
  }
  /** Moves time forward, firing due timers in order and letting promise callbacks run after each. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
    await flush();
  }
}

/** Runs every pending promise callback (all microtasks run before an immediate). */
const flush = () => new Promise<void>((r) => setImmediate(r));

function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function aRequest(overrides: Partial<ProbeRequest> = {}): ProbeRequest {
  return {
    scheme: "HTTP",
    address: "10.0.0.1",
    port: 8080,
    path: "/healthz",
    method: "GET",
    headers: [],
    ...overrides,
  };
}

function aJudgement(overrides: Partial<ProbeJudgement> = {}): ProbeJudgement {
  return { timeoutMs: 1000, statusCodes: [[200, 299]], ...overrides };
}

function aTarget(id: string, overrides: Partial<ProbeTarget> = {}): ProbeTarget {
  return {
    id,
    request: aRequest({
      address: `10.0.${Math.floor(Number(id.replace(/\D/g, "") || 0) / 250)}.${(Number(id.replace(/\D/g, "") || 0) % 250) + 1}`,
    }),
    judgement: aJudgement(),
    periodMs: 10_000,
    ...overrides,
  };
}

function ok(statusCode = 200, body?: string): RawProbeResult {
  const r: RawProbeResult = { kind: "response", statusCode, sentAtMs: 1, headersAtMs: 3, endAtMs: 4, finishedAt: 0 };
  if (body !== undefined) r.body = body;
  return r;
}

interface Call {
  req: ProbeRequest;
  timeoutMs: number;
  readBody: boolean;
  at: number;
  resolve: (r: RawProbeResult) => void;
}

/** An execute whose probes finish when the test says so (or at once, with `instant`). */
function harness(
  opts: {
    instant?: RawProbeResult;
    maxConcurrent?: number;
    maxPerNamespace?: number;
    maxTimeoutMs?: number;
    random?: () => number;
    batchMs?: number;
    earlyPerSecond?: number;
  } = {},
) {
  const clock = new FakeClock();
  const calls: Call[] = [];
  const results: Array<{ owner: string; id: string; outcome: ProbeOutcome }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const running = new Map<string, number>();
  let overlaps = 0;
  const scheduler = new ProbeScheduler({
    clock,
    random: opts.random ?? seededRandom(42),
    ...(opts.maxConcurrent ? { maxConcurrent: opts.maxConcurrent } : {}),
    ...(opts.maxPerNamespace ? { maxPerNamespace: opts.maxPerNamespace } : {}),
    ...(opts.maxTimeoutMs ? { maxTimeoutMs: opts.maxTimeoutMs } : {}),
    ...(opts.batchMs !== undefined ? { batchMs: opts.batchMs } : {}),
    ...(opts.earlyPerSecond !== undefined ? { earlyPerSecond: opts.earlyPerSecond } : {}),
    execute: (req, timeoutMs, readBody) =>
      new Promise<RawProbeResult>((resolve) => {
        const key = `${req.address}:${req.port}${req.path}`;
        if ((running.get(key) ?? 0) > 0) overlaps++;
        running.set(key, (running.get(key) ?? 0) + 1);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const done = (r: RawProbeResult) => {
          running.set(key, (running.get(key) ?? 1) - 1);
          inFlight--;
          resolve(r);
        };
        calls.push({ req, timeoutMs, readBody, at: clock.now(), resolve: done });
        if (opts.instant) done(opts.instant);
      }),
    onResult: (owner, id, outcome) => results.push({ owner, id, outcome }),
  });
  return { clock, calls, results, scheduler, stats: () => ({ maxInFlight, overlaps }) };
}

describe("ProbeScheduler timing", () => {
  it("spreads 1,000 targets of one period across it", async () => {
    const h = harness({ instant: ok() });
    const targets = Array.from({ length: 1000 }, (_, i) => aTarget(`pod-${i}`));
    h.scheduler.setTargets("ns/web", targets);
    const start = h.clock.now();
    await h.clock.advance(10_000);
    const firstStart = new Map<string, number>();
    for (const c of h.calls) if (!firstStart.has(c.req.address)) firstStart.set(c.req.address, c.at - start);
    expect(firstStart.size).toBe(1000);
    const perTenth = new Array<number>(10).fill(0);
    // The start grid may push the last ones onto the period's end: count those in the last tenth.
    for (const at of firstStart.values()) perTenth[Math.min(9, Math.floor(at / 1000))]! += 1;
    for (const n of perTenth) {
      expect(n).toBeGreaterThanOrEqual(70);
      expect(n).toBeLessThanOrEqual(130);
    }
    expect(h.clock.pendingTimers()).toBe(1);
  });

  it("probes each target once per period, keeping its phase", async () => {
    const h = harness({ instant: ok() });
    h.scheduler.setTargets("ns/web", [aTarget("pod-1"), aTarget("pod-2"), aTarget("pod-3")]);
    await h.clock.advance(30_000);
    const byAddress = new Map<string, number[]>();
    for (const c of h.calls) byAddress.set(c.req.address, [...(byAddress.get(c.req.address) ?? []), c.at]);
    expect(byAddress.size).toBe(3);
    for (const times of byAddress.values()) {
      expect(times).toHaveLength(3);
      expect(times[1]! - times[0]!).toBe(10_000);
      expect(times[2]! - times[1]!).toBe(10_000);
    }
    expect(h.results).toHaveLength(9);
    expect(h.results.every((r) => r.owner === "ns/web" && r.outcome.success)).toBe(true);
  });

  it("never runs two probes of one target at once: a slow probe makes it skip periods", async () => {
    const h = harness({ random: () => 0 });
    h.scheduler.setTargets("ns/web", [aTarget("pod-1")]);
    await h.clock.advance(35_000);
    expect(h.calls).toHaveLength(1);
    expect(h.scheduler.stats().inFlight).toBe(1);
    const releasedAt = h.clock.now();
    h.calls[0]!.resolve(ok());
    await h.clock.advance(0);
    // The one overdue period runs at once; the ones before it are skipped, not run back to back.
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1]!.at).toBe(releasedAt);
    expect(h.scheduler.stats().skipped).toBe(2);
    h.calls[1]!.resolve(ok());
    await h.clock.advance(10_000);
    expect(h.calls).toHaveLength(3);
    expect(h.stats().overlaps).toBe(0);
    // Back on its phase: a whole number of periods after the first probe.
    expect((h.calls[2]!.at - h.calls[0]!.at) % 10_000).toBe(0);
  });
});

describe("ProbeScheduler first probes of restored targets", () => {
  it("probes targets with firstWithinMs inside that window, then spreads their next probes over the period", async () => {
    const h = harness({ instant: ok() });
    const start = h.clock.now();
    h.scheduler.setTargets(
      "ns/web",
      Array.from({ length: 500 }, (_, i) => aTarget(`pod-${i}`, { firstWithinMs: 2_000 })),
    );
    await h.clock.advance(2_100);
    // Every first probe within the window (and the start grid's 20 ms).
    expect(new Set(h.calls.map((c) => c.req.address)).size).toBe(500);
    expect(Math.max(...h.calls.map((c) => c.at - start))).toBeLessThanOrEqual(2_020);
    await h.clock.advance(30_000);
    const times = new Map<string, number[]>();
    for (const c of h.calls) times.set(c.req.address, [...(times.get(c.req.address) ?? []), c.at - start]);
    // The second probe comes half a period to one and a half after the first, at a random phase...
    const phases = new Array<number>(10).fill(0);
    for (const [, [first, second, third]] of times) {
      expect(second! - first!).toBeGreaterThanOrEqual(5_000);
      expect(second! - first!).toBeLessThanOrEqual(15_020);
      // ...and the third keeps that phase.
      expect(third! - second!).toBe(10_000);
      phases[Math.floor((second! % 10_000) / 1_000)]! += 1;
    }
    // So a period later the probes are spread over the whole period again, not bunched in the first two seconds.
    for (const n of phases) expect(n).toBeGreaterThanOrEqual(25);
  });

  it("starts early first probes at most earlyPerSecond, and never later than a period: a restart restores every target at once", async () => {
    const h = harness({ instant: ok(), earlyPerSecond: 100 });
    const start = h.clock.now();
    h.scheduler.setTargets(
      "ns/web",
      Array.from({ length: 500 }, (_, i) => aTarget(`pod-${i}`, { firstWithinMs: 2_000 })),
    );
    h.scheduler.setTargets(
      "ns/shop",
      Array.from({ length: 700 }, (_, i) =>
        aTarget(`pod-${i}`, { firstWithinMs: 2_000, request: aRequest({ address: "10.0.1.1", path: `/p${i}` }) }),
      ),
    );
    await h.clock.advance(10_000);
    const first = new Map<string, number>();
    for (const c of h.calls)
      if (!first.has(`${c.req.address}${c.req.path}`)) first.set(`${c.req.address}${c.req.path}`, c.at - start);
    const firsts = [...first.values()];
    // 100/s: at most 100 (plus the 20 ms start grid's one) in any second, across both owners.
    for (let s = 0; s < 10; s++)
      expect(firsts.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length).toBeLessThanOrEqual(102);
    expect(firsts.length).toBeGreaterThanOrEqual(990);
    // The rest are due by the end of their first period, as without firstWithinMs.
    await h.clock.advance(20);
    expect(new Set(h.calls.map((c) => `${c.req.address}${c.req.path}`)).size).toBe(1_200);
  });

  it("ignores firstWithinMs for a request it already probes", async () => {
    const h = harness({ instant: ok(), random: () => 0.5 });
    const start = h.clock.now();
    h.scheduler.setTargets("ns/web", [aTarget("pod-1")]);
    h.scheduler.setTargets("ns/other", [aTarget("pod-1", { firstWithinMs: 100 })]);
    await h.clock.advance(6_000);
    expect(h.calls.map((c) => c.at - start)).toEqual([5_000]);
  });
});

describe("ProbeScheduler batching", () => {
  const cases: Array<{ name: string; batchMs: number; periodMs: number; startOffset: number; lag: number }> = [
    {
      name: "starts a probe due between grid points at the next one, on a grid grown to 100 ms for one probe every 10 s",
      batchMs: 20,
      periodMs: 10_000,
      startOffset: 100,
      lag: 93,
    },
    {
      name: "never grows the grid past 2% of the shortest period: 20 ms for a 1 s period",
      batchMs: 20,
      periodMs: 1_000,
      startOffset: 20,
      lag: 13,
    },
    {
      name: "starts a probe at its exact due time without a grid",
      batchMs: 0,
      periodMs: 10_000,
      startOffset: 7,
      lag: 0,
    },
  ];
  it.each(cases)("$name", async ({ batchMs, periodMs, startOffset, lag }) => {
    // A random phase 7 ms after a grid point (the fake clock starts on one).
    const h = harness({ instant: ok(), batchMs, random: () => 7.5 / periodMs });
    const t0 = h.clock.now();
    h.scheduler.setTargets("ns/web", [aTarget("pod-1", { periodMs })]);
    await h.clock.advance(200);
    expect(h.calls.map((c) => c.at - t0)).toEqual([startOffset]);
    expect(h.scheduler.stats().lagMaxMs).toBe(lag);
  });

  it("starts everything due within one grid step in a single wake-up", async () => {
    const h = harness({ instant: ok(), batchMs: 20, random: seededRandom(7) });
    h.scheduler.setTargets(
      "ns/web",
      Array.from({ length: 200 }, (_, i) => aTarget(`pod-${i}`, { periodMs: 1_000 })),
    );
    await h.clock.advance(1_000);
    const distinctStarts = new Set(h.calls.map((c) => c.at));
    expect(new Set(h.calls.map((c) => c.req.address)).size).toBe(200);
    expect(distinctStarts.size).toBeLessThanOrEqual(50);
    for (const at of distinctStarts) expect(at % 20).toBe(0);
  });
});

describe("ProbeScheduler target sets", () => {
  it("keeps the phase of unchanged targets, stops removed ones and reschedules a changed period", async () => {
    const h = harness({ instant: ok() });
    h.scheduler.setTargets("ns/web", [aTarget("pod-1"), aTarget("pod-2")]);
    await h.clock.advance(10_000);
    const firstAt = new Map(h.calls.map((c) => [c.req.address, c.at]));
    // Same pod-1, pod-2 removed, pod-3 added.
    h.scheduler.setTargets("ns/web", [aTarget("pod-1"), aTarget("pod-3")]);
    await h.clock.advance(10_000);
    const second = h.calls.slice(2);
    const pod1 = aTarget("pod-1").request.address;
    const pod2 = aTarget("pod-2").request.address;
    expect(second.find((c) => c.req.address === pod1)?.at).toBe(firstAt.get(pod1)! + 10_000);
    expect(second.some((c) => c.req.address === pod2)).toBe(false);
    expect(second.some((c) => c.req.address === aTarget("pod-3").request.address)).toBe(true);
    // pod-1 to a 2 s period: the next probe comes within 2 s of its last.
    const before = h.calls.length;
    h.scheduler.setTargets("ns/web", [aTarget("pod-1", { periodMs: 2_000 }), aTarget("pod-3")]);
    await h.clock.advance(10_000);
    const pod1Times = h.calls
      .slice(before)
      .filter((c) => c.req.address === pod1)
      .map((c) => c.at);
    expect(pod1Times.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < pod1Times.length; i++) expect(pod1Times[i]! - pod1Times[i - 1]!).toBe(2_000);
    expect(h.scheduler.stats()).toMatchObject({ targets: 2, uniqueRequests: 2 });
  });

  it("stops everything for an owner given no targets, and after stop()", async () => {
    const h = harness({ instant: ok() });
    h.scheduler.setTargets("ns/a", [aTarget("pod-1")]);
    h.scheduler.setTargets("ns/b", [aTarget("pod-2")]);
    h.scheduler.setTargets("ns/a", []);
    await h.clock.advance(20_000);
    expect(new Set(h.calls.map((c) => c.req.address))).toEqual(new Set([aTarget("pod-2").request.address]));
    h.scheduler.stop();
    const n = h.calls.length;
    await h.clock.advance(20_000);
    expect(h.calls).toHaveLength(n);
    expect(h.clock.pendingTimers()).toBe(0);
  });
});

describe("ProbeScheduler deduplication", () => {
  it("sends one request for two owners at the shorter period with the longer timeout, and judges it per owner", async () => {
    const h = harness({ instant: ok(200, "status: Degraded") });
    const request = aRequest({
      headers: [
        { name: "X-A", value: "1" },
        { name: "X-B", value: "2" },
      ],
    });
    h.scheduler.setTargets("ns/strict", [
      { id: "uid-1", request, periodMs: 30_000, judgement: aJudgement({ timeoutMs: 5_000, bodyContains: "Healthy" }) },
    ]);
    // Same request, headers in another order.
    const same = aRequest({
      headers: [
        { name: "X-B", value: "2" },
        { name: "X-A", value: "1" },
      ],
    });
    h.scheduler.setTargets("ns/lenient", [
      { id: "uid-1", request: same, periodMs: 10_000, judgement: aJudgement({ timeoutMs: 1_000 }) },
    ]);
    expect(h.scheduler.stats()).toMatchObject({ targets: 2, uniqueRequests: 1 });
    await h.clock.advance(30_000);
    expect(h.calls).toHaveLength(3);
    expect(h.calls.every((c) => c.timeoutMs === 5_000 && c.readBody)).toBe(true);
    const strict = h.results.filter((r) => r.owner === "ns/strict");
    const lenient = h.results.filter((r) => r.owner === "ns/lenient");
    expect(strict).toHaveLength(3);
    expect(lenient).toHaveLength(3);
    expect(strict[0]!.outcome).toMatchObject({ success: false, failureClass: 'body did not contain "Healthy"' });
    expect(lenient[0]!.outcome).toMatchObject({ success: true, failureClass: "HTTP 200" });
  });

  it("keeps probing for the remaining owner when one leaves", async () => {
    const h = harness({ instant: ok() });
    h.scheduler.setTargets("ns/a", [aTarget("pod-1")]);
    h.scheduler.setTargets("ns/b", [aTarget("pod-1")]);
    h.scheduler.setTargets("ns/a", []);
    await h.clock.advance(10_000);
    expect(h.calls).toHaveLength(1);
    expect(h.results.map((r) => r.owner)).toEqual(["ns/b"]);
  });

  it("applies an owner's shorter timeout to a shared slow response", async () => {
    const slow: RawProbeResult = {
      kind: "response",
      statusCode: 200,
      sentAtMs: 5,
      headersAtMs: 2_500,
      endAtMs: 2_500,
      finishedAt: 0,
    };
    const h = harness({ instant: slow });
    h.scheduler.setTargets("ns/patient", [aTarget("pod-1", { judgement: aJudgement({ timeoutMs: 5_000 }) })]);
    h.scheduler.setTargets("ns/hasty", [aTarget("pod-1", { judgement: aJudgement({ timeoutMs: 2_000 }) })]);
    await h.clock.advance(10_000);
    expect(h.results.find((r) => r.owner === "ns/patient")?.outcome.success).toBe(true);
    expect(h.results.find((r) => r.owner === "ns/hasty")?.outcome.failureClass).toBe("timeout after 2s");
  });
});

describe("ProbeScheduler back-pressure", () => {
  it("runs at most maxConcurrent probes, queues the rest without dropping any, and reports the lag", async () => {
    const h = harness({ maxConcurrent: 2, random: () => 0 });
    h.scheduler.setTargets(
      "ns/web",
      Array.from({ length: 10 }, (_, i) => aTarget(`pod-${i}`)),
    );
    await h.clock.advance(0);
    expect(h.calls).toHaveLength(2);
    expect(h.scheduler.stats()).toMatchObject({ inFlight: 2, queued: 8 });
    await h.clock.advance(500);
    expect(h.scheduler.stats().oldestQueuedMs).toBe(500);
    let released = 0;
    while (released < h.calls.length) {
      h.calls[released++]!.resolve(ok());
      await h.clock.advance(100);
      expect(h.scheduler.stats().inFlight).toBeLessThanOrEqual(2);
    }
    expect(h.calls).toHaveLength(10);
    expect(new Set(h.calls.map((c) => c.req.address)).size).toBe(10);
    expect(h.results).toHaveLength(10);
    expect(h.stats().maxInFlight).toBe(2);
    expect(h.scheduler.stats()).toMatchObject({ queued: 0, inFlight: 0 });
    // The last two waited for eight releases: 500 ms, then 100 ms apart.
    expect(h.scheduler.stats().lagMaxMs).toBe(1_200);
  });

  it("delivers a failure when execute throws instead of stalling the target", async () => {
    const clock = new FakeClock();
    const results: ProbeOutcome[] = [];
    let calls = 0;
    const scheduler = new ProbeScheduler({
      clock,
      random: () => 0,
      execute: () => {
        calls++;
        throw new Error("boom");
      },
      onResult: (_o, _i, outcome) => results.push(outcome),
    });
    scheduler.setTargets("ns/web", [aTarget("pod-1")]);
    await clock.advance(20_000);
    expect(calls).toBe(3);
    expect(results[0]).toMatchObject({ success: false, failureKind: "other", failureClass: "probe error: boom" });
  });
});

describe("ProbeScheduler.probeNow", () => {
  it("probes only the given targets at once, then keeps their phase", async () => {
    const h = harness({ instant: ok(), batchMs: 0, random: () => 0.5 });
    const t0 = h.clock.now();
    h.scheduler.setTargets("ns/web", [aTarget("pod-1"), aTarget("pod-2")]);
    await h.clock.advance(1_000);
    h.scheduler.probeNow("ns/web", ["pod-1", "pod-gone"]);
    await h.clock.advance(0);
    expect(h.calls.map((c) => [c.req.address, c.at - t0])).toEqual([[aTarget("pod-1").request.address, 1_000]]);
    expect(h.results.map((r) => r.id)).toEqual(["pod-1"]);
    await h.clock.advance(19_000);
    // Both stay on their original phase (5 s into the period): the early probe is one more, not a shift.
    const pod1 = h.calls.filter((c) => c.req.address === aTarget("pod-1").request.address).map((c) => c.at - t0);
    expect(pod1).toEqual([1_000, 5_000, 15_000]);
    expect(h.calls.filter((c) => c.req.address === aTarget("pod-2").request.address).map((c) => c.at - t0)).toEqual([
      5_000, 15_000,
    ]);
  });

  it("does not double a probe already running: its result serves", async () => {
    const h = harness({ batchMs: 0, random: () => 0 });
    h.scheduler.setTargets("ns/web", [aTarget("pod-1")]);
    await h.clock.advance(0);
    expect(h.calls).toHaveLength(1);
    h.scheduler.probeNow("ns/web", ["pod-1"]);
    await h.clock.advance(500);
    expect(h.calls).toHaveLength(1);
    h.calls[0]!.resolve(ok());
    await h.clock.advance(0);
    expect(h.results).toHaveLength(1);
    expect(h.stats().overlaps).toBe(0);
  });

  it("leaves the targets of other owners alone", async () => {
    const h = harness({ instant: ok(), batchMs: 0, random: () => 0.5 });
    h.scheduler.setTargets("ns/a", [aTarget("pod-1")]);
    h.scheduler.setTargets("ns/b", [aTarget("pod-2")]);
    h.scheduler.probeNow("ns/a", ["pod-2"]);
    await h.clock.advance(1_000);
    expect(h.calls).toHaveLength(0);
  });
});

describe("ProbeScheduler fairness between namespaces", () => {
  it("keeps t2's verdicts on time while 500 probes of t1 hang", async () => {
    const h = harness({ maxConcurrent: 64, maxPerNamespace: 16, random: () => 0 });
    h.scheduler.setTargets(
      "t1/hang",
      Array.from({ length: 500 }, (_, i) => aTarget(`pod-${i}`)),
    );
    h.scheduler.setTargets(
      "t2/web",
      Array.from({ length: 20 }, (_, i) => aTarget(`pod-${1000 + i}`)),
    );
    // t2's probes answer at once; t1's never do (their sockets accept and stay silent).
    const t2Addresses = new Set(Array.from({ length: 20 }, (_, i) => aTarget(`pod-${1000 + i}`).request.address));
    const answerT2 = () => {
      for (const c of h.calls.splice(0))
        if (t2Addresses.has(c.req.address)) c.resolve(ok());
        else hanging.push(c);
    };
    const hanging: Call[] = [];
    for (let step = 0; step < 100; step++) {
      await h.clock.advance(100);
      answerT2();
    }
    // One period: every t2 target has its verdict, t1 holds only its share of the slots.
    const t2Results = new Set(h.results.filter((r) => r.owner === "t2/web").map((r) => r.id));
    expect(t2Results.size).toBe(20);
    expect(hanging).toHaveLength(16);
    // What healthprobe_probes_in_flight reports per namespace: t1's share held, t2's probes not yet answered.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    const t2Waiting = h.calls.filter((c) => t2Addresses.has(c.req.address)).length;
    expect([h.scheduler.inFlightOf("t1"), h.scheduler.inFlightOf("t2"), h.scheduler.inFlightOf("t3")]).toEqual([
      16,
      t2Waiting,
      0,
    ]);
  });

  it("gives a deduplicated probe of two policies to the pod's namespace", async () => {
    const h = harness({ maxConcurrent: 64, maxPerNamespace: 1, random: () => 0 });
    h.scheduler.setTargets("t1/a", [aTarget("pod-1"), aTarget("pod-2")]);
    h.scheduler.setTargets("t1/b", [aTarget("pod-1"), aTarget("pod-2")]);
    await h.clock.advance(50);
    expect(h.calls).toHaveLength(1);
  });
});

describe("ProbeScheduler timeout cap", () => {
  it.each([
    ["runs a probe asking for more than the cap with the cap", 600_000, 60_000],
    ["runs a probe under the cap with its own timeout", 5_000, 5_000],
  ])("%s", async (_name, requested, used) => {
    const h = harness({ maxTimeoutMs: 60_000, random: () => 0 });
    h.scheduler.setTargets("t1/web", [aTarget("pod-1", { judgement: aJudgement({ timeoutMs: requested }) })]);
    await h.clock.advance(10);
    expect(h.calls.map((c) => c.timeoutMs)).toEqual([used]);
  });
});
