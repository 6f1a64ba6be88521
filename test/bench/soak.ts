// `soak [--days 7] [--pods 120] [--policies 6]`: a simulated week of steady churn through the
// operator's long-lived in-memory parts on a fake clock: the probe scheduler, the response parser
// and judgement, and the health store. Pods are created and deleted, go unhealthy and healthy,
// policies are edited (period, thresholds, window); every few simulated hours the heap is
// measured after a forced GC, with the active handles and timers. One JSON line: the
// least-squares slope of heap against simulated time (bytes per simulated hour), the start and
// end heap, and the handle and timer counts. Probes are answered in memory (canned bytes through
// the real parser), not over sockets: a week of them over loopback would take days.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ResponseParser } from "../../operator/src/adapters/http-response-parser.js";
import type { EvaluationSettings } from "../../operator/src/domain/types.js";
import type { ProbeJudgement, ProbeRequest, RawProbeResult } from "../../operator/src/domain/probe-request.js";
import { HealthStore } from "../../operator/src/runtime/health-store.js";
import { ProbeScheduler, type ProbeTarget } from "../../operator/src/runtime/probe-scheduler.js";
import { FakeClock } from "../../operator/src/runtime/testing/fake-clock.js";
import { Rng } from "../simulation/prng.js";
import type { Benchmark } from "./bench.js";
import { numberFlags } from "./flags.js";

export interface SoakOptions {
  days: number;
  pods: number;
  policies: number;
  /** Simulated hours between two heap samples. */
  sampleEveryHours: number;
  seed: number;
}

export interface SoakSample {
  simHours: number;
  heapBytes: number;
  /** process.getActiveResourcesInfo(): every active handle and request, and the timers among them. */
  resources: number;
  timers: number;
  fakeTimers: number;
  targets: number;
}

export interface SoakResult {
  benchmark: "soak";
  days: number;
  pods: number;
  policies: number;
  probes: number;
  transitions: number;
  slopeBytesPerSimHour: number;
  startHeapBytes: number;
  endHeapBytes: number;
  start: { resources: number; timers: number; fakeTimers: number };
  end: { resources: number; timers: number; fakeTimers: number };
  /** At the end: pods alive, and what the health store and the scheduler still hold (a deleted pod kept is a leak). */
  tracked: { livePods: number; storePods: number; schedulerTargets: number };
  samples: number;
  realMs: number;
}

const HEALTHY = Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nHealthy");
const UNHEALTHY = Buffer.from(
  "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nsick\r\n0\r\n\r\n",
);

/** A forced full GC, without needing node --expose-gc on the command line. */
function gcFunction(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function resourceCounts(): { resources: number; timers: number } {
  const info = process.getActiveResourcesInfo();
  return { resources: info.length, timers: info.filter((r) => r === "Timeout").length };
}

/** Least-squares slope of y against x. */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

interface Pod {
  uid: string;
  ip: string;
  healthy: boolean;
  startedAt: number;
}

interface Policy {
  name: string;
  periodMs: number;
  settings: EvaluationSettings;
  pods: Map<string, Pod>;
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const realStart = performance.now();
  const gc = gcFunction();
  const rng = new Rng(o.seed);
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const store = new HealthStore();
  const healthyByIp = new Map<string, boolean>();
  let probes = 0;
  let transitions = 0;
  let nextPod = 0;

  // The real parser and judgement on canned bytes: what a probe costs in memory, without the socket.
  const execute = (req: ProbeRequest): Promise<RawProbeResult> => {
    probes++;
    const parser = new ResponseParser(false);
    const now = () => 1;
    parser.push(healthyByIp.get(req.address) ? HEALTHY : UNHEALTHY, now);
    return Promise.resolve(parser.result(0, clock.now()));
  };
  const scheduler = new ProbeScheduler({
    execute,
    clock,
    random: () => rng.next(),
    onResult: (owner, uid, outcome) => {
      if (store.record(owner, uid, outcome)) transitions++;
    },
  });

  const judgement: ProbeJudgement = { timeoutMs: 5000, statusCodes: [[200, 299]] };
  const policies: Policy[] = Array.from({ length: o.policies }, (_, i) => ({
    name: `ns/policy-${i}`,
    periodMs: 30_000,
    settings: { failureThreshold: 3, successThreshold: 1, startupGraceSeconds: 0 },
    pods: new Map(),
  }));
  const addPod = (p: Policy) => {
    const n = nextPod++;
    const pod: Pod = {
      uid: `uid-${n}`,
      ip: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
      healthy: true,
      startedAt: clock.now(),
    };
    p.pods.set(pod.uid, pod);
    healthyByIp.set(pod.ip, true);
  };
  const removePod = (p: Policy) => {
    const uid = [...p.pods.keys()][rng.int(0, p.pods.size - 1)];
    if (uid === undefined) return;
    healthyByIp.delete((p.pods.get(uid) as Pod).ip);
    p.pods.delete(uid);
  };
  // As the policy controller does on every change: the store's targets, then the scheduler's.
  const sync = (p: Policy) => {
    const pods = [...p.pods.values()];
    store.configure(
      p.name,
      p.settings,
      pods.map((x) => ({ uid: x.uid, name: x.uid, ip: x.ip, startedAt: x.startedAt })),
      new Map(),
      clock.now(),
    );
    const request = (x: Pod): ProbeRequest => ({
      scheme: "HTTP",
      address: x.ip,
      port: 8080,
      path: "/healthz",
      method: "GET",
      headers: [],
    });
    scheduler.setTargets(
      p.name,
      pods.map((x): ProbeTarget => ({ id: x.uid, request: request(x), judgement, periodMs: p.periodMs })),
    );
  };
  policies.forEach((p, i) => {
    for (let k = 0; k < Math.floor(o.pods / o.policies) + (i < o.pods % o.policies ? 1 : 0); k++) addPod(p);
    sync(p);
  });

  // One simulated minute of churn: a few pods replaced, a few flipping, now and then a policy edited.
  const churn = () => {
    for (const p of policies) {
      if (rng.chance(0.05)) {
        removePod(p);
        addPod(p);
        sync(p);
      }
      for (const pod of p.pods.values()) {
        if (rng.chance(0.002)) {
          pod.healthy = !pod.healthy;
          healthyByIp.set(pod.ip, pod.healthy);
        }
      }
      if (rng.chance(0.002)) {
        p.periodMs = rng.int(1, 6) * 10_000;
        p.settings = rng.chance(0.5)
          ? { failureThreshold: rng.int(1, 5), successThreshold: rng.int(1, 3), startupGraceSeconds: 0 }
          : {
              failureThreshold: 3,
              successThreshold: 1,
              startupGraceSeconds: 0,
              window: { sampleSize: 6, successfulSamplesRequired: 3 },
            };
        sync(p);
      }
    }
  };

  const samples: SoakSample[] = [];
  const sample = (simHours: number) => {
    gc();
    const r = resourceCounts();
    samples.push({
      simHours,
      heapBytes: process.memoryUsage().heapUsed,
      ...r,
      fakeTimers: clock.pending(),
      targets: scheduler.stats().targets,
    });
  };
  const minutes = o.days * 24 * 60;
  const sampleEvery = Math.max(1, Math.round(o.sampleEveryHours * 60));
  sample(0);
  for (let m = 1; m <= minutes; m++) {
    // Second by second: each second's probes settle (their promises) before the next is due.
    for (let s = 0; s < 60; s++) {
      clock.advance(1000);
      await Promise.resolve();
    }
    churn();
    if (m % sampleEvery === 0) sample(m / 60);
  }
  const tracked = {
    livePods: policies.reduce((n, p) => n + p.pods.size, 0),
    storePods: store.debugTargets().length,
    schedulerTargets: scheduler.stats().targets,
  };
  scheduler.stop();

  const first = samples[0] as SoakSample;
  const last = samples[samples.length - 1] as SoakSample;
  // The first day is warm-up (JIT, maps reaching their size): the slope is over the rest.
  const steady = samples.filter((s) => s.simHours >= Math.min(24, (o.days * 24) / 2));
  return {
    benchmark: "soak",
    days: o.days,
    pods: o.pods,
    policies: o.policies,
    probes,
    transitions,
    slopeBytesPerSimHour: Math.round(
      slope(
        steady.map((s) => s.simHours),
        steady.map((s) => s.heapBytes),
      ),
    ),
    startHeapBytes: first.heapBytes,
    endHeapBytes: last.heapBytes,
    start: { resources: first.resources, timers: first.timers, fakeTimers: first.fakeTimers },
    end: { resources: last.resources, timers: last.timers, fakeTimers: last.fakeTimers },
    tracked,
    samples: samples.length,
    realMs: Math.round(performance.now() - realStart),
  };
}

export const soakBenchmark: Benchmark = {
  name: "soak",
  description:
    "A simulated week of churn through the scheduler, parser and health store on a fake clock: heap slope per simulated hour, handles and timers.",
  usage: "soak [--days 7] [--pods 120] [--policies 6] [--sample-hours 6] [--seed 1]",
  async run(args) {
    const f = numberFlags(args, { days: 7, pods: 120, policies: 6, "sample-hours": 6, seed: 1 });
    const result = await runSoak({
      days: f.days,
      pods: f.pods,
      policies: f.policies,
      sampleEveryHours: f["sample-hours"],
      seed: f.seed,
    });
    console.log(JSON.stringify(result));
  },
};
