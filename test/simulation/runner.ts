// One seed of the simulation: an API test server with its kubelet stand-in, real pod servers,
// the real operator (one replica, or two with leader election) on a fake clock, a random
// history of steps, and every invariant checked after each step and once the history settles.
import { CoreV1Api } from "@kubernetes/client-node";
import { requestsBy } from "../apiserver/index.js";
import { kubeConfigFor, startCluster, uniquePodCidr, type TestCluster } from "../integration/support/cluster.js";
import { applyAction, createOwners, servePods, type SimEnv } from "./actions.js";
import { Fleet, OPERATOR_USER_PREFIX } from "./fleet.js";
import { APPS, Intent, describeAction, nextStep, randomPolicy, type Action } from "./history.js";
import { checkAll, type Violation } from "./invariants/index.js";
import { PodServers } from "./pod-servers.js";
import { Rng } from "./prng.js";
import { advance, type SettleStats } from "./settle.js";
import { installSimClock, realNow } from "./sim-clock.js";
import type { ProbingStart, Snapshot, World } from "./snapshot.js";
import { recordEvictions, readWorld } from "./world-reader.js";

export interface SeedOptions {
  seed: number;
  steps: number;
  /** Invariants not to check (the test's list of known open defects). */
  skip?: ReadonlySet<string>;
  /** One line per step, for --verbose. */
  trace?: (line: string) => void;
}

export interface SeedResult {
  seed: number;
  steps: number;
  /** The first violation of each invariant. */
  violations: Violation[];
  realMs: number;
  evictions: number;
  settle: SettleStats;
  /** The action of each step, to read with a violation. */
  actions: string[];
  leaderElect: boolean;
  /** Replica incarnations started, and how many died at each failpoint. */
  replicas: number;
  failpointCrashes: number;
  /** Proof the run exercised the operator: probes the pod servers answered, slice writes the API received. */
  probes: number;
  sliceWrites: number;
}

/** 2026-01-01T00:00:00Z: simulated time starts here, whatever the date. */
const SIM_START = Date.UTC(2026, 0, 1);
const MAX_REPLACEMENTS_PER_12H = 3;
const SETTLE_MS = 30_000;
const NS = "sim";

export async function runSeed(o: SeedOptions): Promise<SeedResult> {
  const started = realNow();
  const sim = installSimClock(SIM_START);
  const rng = new Rng(o.seed);
  const leaderElect = rng.chance(0.5);
  let cluster: TestCluster | undefined;
  const servers = new PodServers(() => sim.clock.now());
  let fleet: Fleet | undefined;
  try {
    cluster = await startCluster({ simulateKubelet: true, controllers: false, terminationDelayMs: 2_000, podCidr: uniquePodCidr(), namespace: NS });
    const c = cluster;
    const probingStarts: ProbingStart[] = [];
    fleet = new Fleet({
      apiUrl: c.server.url,
      clock: sim.clock,
      leaderElect,
      maxReplacementsPer12h: MAX_REPLACEMENTS_PER_12H,
      rng: new Rng(o.seed ^ 0x5bd1e995),
      onStart: (user, at) => probingStarts.push({ user, at }),
    });
    const f = fleet;
    const env: SimEnv = { cluster: c, clock: sim.clock, core: kubeConfigFor(c.server).makeApiClient(CoreV1Api), servers, fleet: f, modes: new Map(), ips: new Map(), owners: { replicaSets: {}, node: undefined } };
    const evictions = recordEvictions(c.server.requestLog, c.server.store, NS, (u) => u.startsWith(OPERATOR_USER_PREFIX));
    const everInRotation: Record<string, Set<string>> = {};
    let holder: string | undefined;
    const afterTick = async () => {
      await servePods(env);
      const world = readWorld(c.server.store, NS, sim.clock.now());
      for (const s of world.slices) for (const e of s.endpoints) if (e.ready) (everInRotation[s.service] ??= new Set()).add(e.pod);
      const lease = c.server.store.get({ group: "coordination.k8s.io", version: "v1", resource: "leases" }, "healthprobe-system", "healthprobe-operator") as
        | { spec?: { holderIdentity?: string; acquireTime?: string } }
        | undefined;
      const h = lease?.spec?.holderIdentity;
      if (h && h !== holder) probingStarts.push({ user: h, at: Date.parse(lease?.spec?.acquireTime ?? "") || sim.clock.now() });
      holder = h;
    };
    const stats: SettleStats = { ticks: 0, unsettled: 0, quietMs: 0, probeWaitMs: 0 };
    const settleDeps = { clock: sim.clock, requestLog: c.server.requestLog, servers, fleet: f, afterTick };
    const operatorUp = () => {
      const w = f.writer();
      return Boolean(w?.isReady() && (!leaderElect || holder === w.user));
    };

    const intent = new Intent();
    const actions: string[] = [];
    await createOwners(env, APPS);
    for (const a of initialActions(intent, rng)) await applyAction(env, a);
    await f.fill();
    await advance(settleDeps, 5_000, stats);

    const violations: Violation[] = [];
    const seen = new Set<string>();
    let previous: World | undefined;
    const judge = (step: number, settled: boolean) => {
      const world = readWorld(c.server.store, NS, sim.clock.now());
      const snap: Snapshot = {
        step,
        world,
        previous,
        evictions,
        probes: servers.hits,
        modeChanges: servers.modeChanges,
        probingStarts,
        everInRotation: Object.fromEntries(Object.entries(everInRotation).map(([k, v]) => [k, [...v]])),
        operatorUp: operatorUp(),
        settled,
        maxReplacementsPer12h: MAX_REPLACEMENTS_PER_12H,
      };
      previous = world;
      o.trace?.(`  ${summary(world)}${snap.operatorUp ? "" : " (no writer)"}`);
      for (const v of checkAll(snap, o.skip)) {
        if (seen.has(v.invariant)) continue;
        seen.add(v.invariant);
        violations.push(v);
        o.trace?.(`  VIOLATION ${v.invariant} at step ${v.step}: ${v.evidence}`);
      }
    };
    judge(0, false);

    for (let i = 1; i <= o.steps; i++) {
      await f.fill();
      const step = nextStep(rng, intent, i, leaderElect);
      actions.push(describeAction(step.action));
      o.trace?.(`step ${i} +${step.advanceMs}ms ${describeAction(step.action)}`);
      await applyAction(env, step.action);
      await advance(settleDeps, step.advanceMs, stats);
      judge(i, false);
    }

    // Settle: faults end, every pod answers, a writer runs long enough.
    c.server.faults.clear();
    for (const name of intent.pods) await applyAction(env, { kind: "probeMode", name, mode: "healthy" });
    await f.fill();
    await advance(settleDeps, SETTLE_MS, stats);
    judge(o.steps + 1, true);

    return { seed: o.seed, steps: o.steps, violations, realMs: realNow() - started, evictions: evictions.length, settle: stats, actions, leaderElect, replicas: f.all.length, failpointCrashes: f.all.filter((r) => r.crashedAt).length,
      probes: servers.hits.length,
      sliceWrites: requestsBy(c.server.requestLog, { writes: true, resource: "endpointslices" }).filter((e) => e.user.startsWith(OPERATOR_USER_PREFIX)).length,
    };
  } finally {
    if (process.env.SIM_DUMP_LOGS) for (const r of fleet?.all ?? []) console.log(`--- ${r.user}\n${r.logs.slice(-Number(process.env.SIM_DUMP_LOGS)).join("")}`);
    await fleet?.stop();
    await servers.close();
    await cluster?.stop();
    sim.restore();
  }
}

/** Two selector-less Services, six serving pods and one policy: the history starts from here. */
function initialActions(intent: Intent, rng: Rng): Action[] {
  const out: Action[] = [...intent.services].map((name): Action => ({ kind: "createService", name }));
  for (const app of ["web", "web", "web", "web", "api", "api"]) {
    const name = intent.newPodName();
    intent.pods.push(name);
    out.push({ kind: "createPod", name, app, owner: "controller", mode: "healthy" });
  }
  const spec = { ...randomPolicy(rng), serviceName: "web", app: "web", dryRun: false };
  intent.policies.set("pol-a", spec);
  out.push({ kind: "createPolicy", name: "pol-a", spec });
  return out;
}

/** One line: each Service's endpoints and each policy's conditions. */
function summary(world: World): string {
  const services = world.services.map((s) => {
    const eps = world.slices.filter((x) => x.service === s.name).flatMap((x) => x.endpoints.map((e) => `${e.pod}${e.ready ? "+" : "-"}`));
    return `${s.name}${s.hasSelector ? "(sel)" : ""}[${eps.join(" ")}]`;
  });
  const policies = world.policies.map((p) => {
    const conds = Object.entries(p.status.conditions).filter(([, c]) => c.status === "True" || c.reason !== "").map(([t, c]) => `${t}=${c.status === "True" ? "T" : "F"}${t === "Ready" ? `/${c.reason}` : ""}`);
    return `${p.name}->${p.serviceName}{${conds.join(",")}}`;
  });
  const pods = world.pods.map((p) => `${p.name}:${p.labels.app ?? "-"}${p.ready ? "R" : "N"}${p.ip ? "" : "?"}${p.terminating ? "T" : ""}`);
  return `${pods.join(" ")} | ${services.join(" ")} | ${policies.join(" ")}`;
}

export function replayCommand(seed: number, steps: number): string {
  return `npm run simulate -- --seed ${seed} --steps ${steps}`;
}
