// One seed of the simulation: an API test server with its kubelet stand-in, real pod servers,
// the real operator (one replica, or two with leader election) on a fake clock, a random
// history of steps, and every invariant checked after each step and once the history settles.
import { CoreV1Api } from "@kubernetes/client-node";
import { requestsBy } from "../../hack/apiserver/index.js";
import { kubeConfigFor, startTestServerCluster, uniquePodCidr } from "../integration/support/cluster.js";
import { applyAction, createOwners, policyObject, servePods, type SimEnv } from "./actions.js";
import { Fleet, OPERATOR_USER_PREFIX } from "./fleet.js";
import { APPS, Intent, MAX_FAULT_DELAY_MS, describeAction, nextStep, randomPolicy, type Action } from "./history.js";
import { checkAll, type Violation } from "./invariants/index.js";
import { Observer, summary } from "./observer.js";
import { PodServers } from "./pod-servers.js";
import { Rng } from "./prng.js";
import { advance, type SettleDeps, type SettleStats } from "./settle.js";
import { installSimClock, realNow, type SimClock } from "./sim-clock.js";
import { SHARD_LEASE_MS, SHARD_RETRY_MS, SHARD_SKEW_MS } from "./replica.js";
import { ShardRecorder } from "./shard-recorder.js";

export interface SeedOptions {
  seed: number;
  steps: number;
  /** Invariants not to check (the test's list of known open defects). */
  skip?: ReadonlySet<string>;
  /** "on": every seed shards; "off": none; drawn (default): a third of the seeds, from a stream of their own. */
  shards?: "on" | "off";
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
  /** With shards on, the replica slots drawn (1-4); 0 with shards off. */
  shardSlots: number;
  /** With shards on, the namespaces besides the simulated one that hold a policy (1-4). */
  otherNamespaces: number;
  /** With shards on: the simulated namespace's releases (its holder written "", the acknowledgement of a handover, or its marker deleted when nothing was left to hand over). */
  releases: number;
  /** With shards on: marker holder changes, and operator writes for the namespace the shard invariants judged. */
  markerChanges: number;
  shardWrites: number;
  /** Replica incarnations started, and how many died at a failpoint. */
  replicas: number;
  failpointCrashes: number;
  /** Proof the run exercised the operator: probes the pod servers answered, slice writes the API received. */
  probes: number;
  sliceWrites: number;
}

/** 2026-01-01T00:00:00Z: simulated time starts here, whatever the date. */
const SIM_START = Date.UTC(2026, 0, 1);
const MAX_REPLACEMENTS_PER_12H = 3;
/**
 * The simulated world is one namespace: a share below the cap is what binds there (and is checked);
 * the operator-wide cap is still checked, though one namespace can no longer reach it.
 */
const MAX_REPLACEMENTS_PER_12H_PER_NAMESPACE = 2;
const SETTLE_MS = 30_000;
const NS = "sim";
/** How long a namespace may go ownerless after its owner died: lease, skew, one period, and slack for the 500 ms ticks, cache sync and the taker's confirmation. */
const OWNER_GAP_SLACK_MS = 3_000;
const OWNER_GAP_BOUND_MS = SHARD_LEASE_MS + SHARD_SKEW_MS + SHARD_RETRY_MS + OWNER_GAP_SLACK_MS;

interface Run {
  sim: SimClock;
  env: SimEnv;
  observer: Observer;
  settle: SettleDeps;
  stats: SettleStats;
  leaderElect: boolean;
  shardSlots: number;
  otherNamespaces: number;
  shards: ShardRecorder | undefined;
  violations: Violation[];
}

export async function runSeed(o: SeedOptions): Promise<SeedResult> {
  const started = realNow();
  const sim = installSimClock(SIM_START);
  const rng = new Rng(o.seed);
  const leaderDraw = rng.chance(0.5);
  // Shards come from a stream of their own, so the other seeds keep their draws and histories.
  const side = new Rng(o.seed ^ 0x2545f491);
  const sharded = o.shards === "on" || (o.shards !== "off" && side.chance(1 / 3));
  const shardSlots = sharded ? side.int(1, 4) : 0;
  // With one namespace its holder always has room for it on the ring, so a live owner would never
  // hand it over: other namespaces with a policy each give a joining replica a share to take.
  const otherNamespaces = sharded ? side.int(1, 4) : 0;
  const leaderElect = sharded ? false : leaderDraw;
  const servers = new PodServers(() => sim.clock.now());
  let run: Run | undefined;
  try {
    run = await setUp(o, sim, servers, leaderElect, shardSlots, otherNamespaces);
    const intent = new Intent();
    await createOtherNamespaces(run.env, otherNamespaces, side);
    await createOwners(run.env, APPS);
    for (const a of initialActions(intent, rng)) await applyAction(run.env, a);
    await run.env.fleet.fill();
    await advance(run.settle, 5_000, run.stats);
    judge(run, o, 0, false);

    const actions: string[] = [];
    for (let i = 1; i <= o.steps; i++) {
      await run.env.fleet.fill();
      const step = nextStep(rng, intent, i, leaderElect, run.shardSlots > 0);
      actions.push(describeAction(step.action));
      o.trace?.(`step ${i} +${step.advanceMs}ms ${describeAction(step.action)}`);
      await applyAction(run.env, step.action);
      await advance(run.settle, step.advanceMs, run.stats);
      judge(run, o, i, false);
    }
    await settleHistory(run, intent);
    judge(run, o, o.steps + 1, true);
    return result(run, o, actions, realNow() - started);
  } finally {
    if (process.env.SIM_DUMP_LOGS)
      for (const r of run?.env.fleet.all ?? [])
        console.log(`--- ${r.user}\n${r.logs.slice(-Number(process.env.SIM_DUMP_LOGS)).join("")}`);
    run?.shards?.close();
    await run?.env.fleet.stop();
    await servers.close();
    await run?.env.cluster.stop();
    sim.restore();
  }
}

async function setUp(
  o: SeedOptions,
  sim: SimClock,
  servers: PodServers,
  leaderElect: boolean,
  shardSlots: number,
  otherNamespaces: number,
): Promise<Run> {
  const cluster = await startTestServerCluster({
    simulateKubelet: true,
    controllers: false,
    terminationDelayMs: 2_000,
    podCidr: uniquePodCidr(),
    namespace: NS,
  });
  const observer = new Observer(
    cluster.server,
    NS,
    sim.clock,
    servers,
    MAX_REPLACEMENTS_PER_12H,
    MAX_REPLACEMENTS_PER_12H_PER_NAMESPACE,
  );
  const fleet = new Fleet({
    apiUrl: cluster.server.url,
    clock: sim.clock,
    leaderElect,
    ...(shardSlots > 0 ? { shards: { slots: shardSlots, namespace: NS } } : {}),
    maxReplacementsPer12h: MAX_REPLACEMENTS_PER_12H,
    maxReplacementsPer12hPerNamespace: MAX_REPLACEMENTS_PER_12H_PER_NAMESPACE,
    rng: new Rng(o.seed ^ 0x5bd1e995),
    onStart: (user, at) => observer.probingStarts.push({ user, at }),
  });
  // A replica starts probing a namespace when it takes its marker, as a leader does at the Lease.
  const shards =
    shardSlots > 0
      ? new ShardRecorder(
          cluster.server,
          NS,
          sim.clock.now(),
          OWNER_GAP_BOUND_MS,
          SHARD_LEASE_MS,
          isOperator,
          (user, at) => observer.probingStarts.push({ user, at }),
        )
      : undefined;
  const core = kubeConfigFor(cluster.server).makeApiClient(CoreV1Api);
  const env: SimEnv = {
    cluster,
    clock: sim.clock,
    core,
    servers,
    fleet,
    modes: new Map(),
    ips: new Map(),
    owners: { replicaSets: {}, node: undefined },
  };
  const afterTick = async () => {
    await servePods(env);
    observer.observe();
  };
  const settle: SettleDeps = { clock: sim.clock, requestLog: cluster.server.requestLog, servers, fleet, afterTick };
  return {
    sim,
    env,
    observer,
    settle,
    stats: { ticks: 0, unsettled: 0, quietMs: 0, probeWaitMs: 0 },
    leaderElect,
    shardSlots,
    otherNamespaces,
    shards,
    violations: [],
  };
}

/** The end of the history: faults stop, every pod answers, a writer runs long enough. */
async function settleHistory(run: Run, intent: Intent): Promise<void> {
  run.env.cluster.server.faults.clear();
  for (const name of intent.pods) await applyAction(run.env, { kind: "probeMode", name, mode: "healthy" });
  // A crash drawn in the last step may come after it: let it happen before the writer is filled in,
  // or it kills the writer while the history settles and nothing restarts one.
  await advance(run.settle, MAX_FAULT_DELAY_MS, run.stats);
  await run.env.fleet.fill(true);
  await advance(run.settle, SETTLE_MS, run.stats);
}

/** Checks the invariants; keeps the first violation of each. */
function judge(run: Run, o: SeedOptions, step: number, settled: boolean): void {
  const snap = run.observer.snapshot(step, settled, run.observer.operatorUp(run.env.fleet, run.leaderElect));
  if (run.shards) snap.shards = run.shards.record(run.sim.clock.now());
  o.trace?.(`  ${summary(snap.world)}${snap.operatorUp ? "" : " (no writer)"}`);
  for (const v of checkAll(snap, o.skip)) {
    if (run.violations.some((x) => x.invariant === v.invariant)) continue;
    run.violations.push(v);
    o.trace?.(`  VIOLATION ${v.invariant} at step ${v.step}: ${v.evidence}`);
  }
}

/** Namespaces `sim-other-<k>`, each with a policy over pods that never come: work the ring shares out, judged by no invariant. */
async function createOtherNamespaces(env: SimEnv, count: number, rng: Rng): Promise<void> {
  for (let k = 1; k <= count; k++) {
    const namespace = `${NS}-other-${k}`;
    await env.cluster.api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await env.cluster.api.create(policyObject("other", namespace, randomPolicy(rng)));
  }
}

function result(run: Run, o: SeedOptions, actions: string[], realMs: number): SeedResult {
  const { env } = run;
  const record = run.shards?.record(env.clock.now());
  return {
    seed: o.seed,
    steps: o.steps,
    violations: run.violations,
    realMs,
    evictions: run.observer.evictions.length,
    settle: run.stats,
    actions,
    leaderElect: run.leaderElect,
    shardSlots: run.shardSlots,
    otherNamespaces: run.otherNamespaces,
    markerChanges: record?.markers.length ?? 0,
    releases: record?.markers.filter((m) => m.holder === "").length ?? 0,
    shardWrites: record?.writes.length ?? 0,
    replicas: env.fleet.all.length,
    failpointCrashes: env.fleet.all.filter((r) => r.crashedAt).length,
    probes: env.servers.hits.length,
    sliceWrites: requestsBy(env.cluster.server.requestLog, { writes: true, resource: "endpointslices" }).filter((e) =>
      e.user.startsWith(OPERATOR_USER_PREFIX),
    ).length,
  };
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

const isOperator = (user: string) => user.startsWith(OPERATOR_USER_PREFIX);

export function replayCommand(seed: number, steps: number, shards?: "on" | "off"): string {
  return `npm run simulate -- --seed ${seed} --steps ${steps}${shards ? ` --shards ${shards}` : ""}`;
}
