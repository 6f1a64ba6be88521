// Chaos on the real control plane (HEALTHPROBE_TEST_CLUSTER=real): etcd killed and restarted,
// kube-apiserver restarted, the operator cut off from the API server through its fault proxy for
// longer than its lease, and one of two leader-electing replicas partitioned. Each fault comes with
// a change of pod health the operator must catch up with; the simulation's routing and budget
// invariants are checked over the world read from the API server throughout, and the time to
// converge after each fault is printed (no timed assertions).
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoordinationV1Api, KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import { startFaultProxy, type FaultProxy, type ProxyLogEntry } from "../../hack/fault-proxy/fault-proxy.js";
import { throughProxy } from "../../hack/fault-proxy/kubeconfig.js";
import { installCrd } from "../support/kube-objects.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import { checkWorld, evictionsFrom, RealWorldReader } from "./real-world.js";
import { Rng } from "../simulation/prng.js";
import type { World } from "../simulation/snapshot.js";

const onReal = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const NS = "chaos";
const OPERATOR_NS = "healthprobe-system";
const REPLICAS = 4;
const PORT = 8080;
/** The operator's defaults (operator/src/runtime/leader-election.ts). */
const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const CONVERGE_TIMEOUT_MS = 120_000;
const FAULT_ROUNDS = 6;
const FAULT_SEED = 11;

/** The simulation's API faults, and the proxy's own, as the seeded rounds pick them. */
const ROUND_FAULTS: Array<[string, (p: FaultProxy) => void]> = [
  [
    "5xx on a third of reads",
    (p) => {
      p.failRate({ rate: 0.3, code: 503, verb: "list" });
      p.failRate({ rate: 0.3, code: 500, verb: "get" });
    },
  ],
  ["409 on half the writes", (p) => p.failRate({ rate: 0.5, code: 409 })],
  [
    "429 with Retry-After on writes",
    (p) => {
      p.failRate({ rate: 0.5, code: 429, verb: "patch" });
      p.failRate({ rate: 0.5, code: 429, verb: "update" });
    },
  ],
  ["500 ms latency", (p) => p.addLatency(500)],
  ["dropped watches", (p) => p.dropWatches()],
  [
    "410 on the next watch, watches dropped",
    (p) => {
      p.expireNextWatch();
      p.dropWatches();
    },
  ],
  ["3 connection resets", (p) => p.addRule({ count: 3, fault: { kind: "reset" } })],
  ["3 truncated answers", (p) => p.addRule({ count: 3, fault: { kind: "truncate" } })],
  ["stalled watches", (p) => p.stallWatches()],
];

interface Replica {
  name: string;
  proxy: FaultProxy;
  op: OperatorProcess;
  identity: string;
}

const isLease = (e: ProxyLogEntry) => e.resource === "leases";
const isWrite = (e: ProxyLogEntry) => ["create", "update", "patch", "delete", "deletecollection"].includes(e.verb);
/** Writes other than the lease's own (the elector keeps trying those; acting means writing anything else). */
const actingWrites = (log: ProxyLogEntry[], after: number) =>
  log.filter((e) => isWrite(e) && !isLease(e) && e.start > after);
/** The last lease write the API server answered 2xx: the replica's last renewal. */
const lastRenewal = (log: ProxyLogEntry[], before: number) =>
  Math.max(
    0,
    ...log
      .filter((e) => isLease(e) && isWrite(e) && e.code >= 200 && e.code < 300 && (e.end ?? e.start) <= before)
      .map((e) => e.end ?? e.start),
  );

(onReal ? describe : describe.skip)("the operator on the real control plane under chaos", () => {
  let cp: ControlPlane;
  let dir: string;
  let reader: RealWorldReader;
  let pods: Array<{ name: string; ip: string }> = [];
  let sick = 0;
  const replicas: Replica[] = [];
  const violations: string[] = [];
  const everInRotation: Record<string, string[]> = {};
  let last: World | undefined;
  let sampling = true;
  let samples = 0;
  let sampler: Promise<void> = Promise.resolve();
  const results: string[] = [];

  async function startReplica(name: string): Promise<Replica> {
    const proxy = await startFaultProxy({ upstream: cp.url, name });
    const op = startOperatorProcess({
      server: {
        writeKubeconfig: (path: string) =>
          writeFileSync(path, throughProxy(cp.kubeconfig(name), proxy.url), { mode: 0o600 }),
      },
      dir,
      user: name,
      flags: ["--leader-elect", "--log-level", "debug"],
    });
    const { identity } = await op.started(90_000);
    const r = { name, proxy, op, identity };
    replicas.push(r);
    return r;
  }

  /** Samples the world from the API server and checks the invariants on each answer, until the suite ends. */
  async function sample(): Promise<void> {
    for (let step = 0; sampling; step++) {
      const world = await reader.read(NS);
      if (world) {
        last = world;
        samples++;
        const evictions = evictionsFrom(
          replicas.flatMap((r) => r.proxy.log),
          NS,
          world,
        );
        for (const v of checkWorld(world, everInRotation, evictions, step))
          if (violations.length < 50) violations.push(`${new Date(world.at).toISOString()} ${v}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Moves the failing health endpoint to the next pod: the operator must drain it and restore the last one. */
  async function moveSickness(): Promise<void> {
    const before = pods[sick]!;
    sick = (sick + 1) % pods.length;
    await cp.podServers.set(pods[sick]!.ip, { status: 503, body: "unhealthy\n" });
    await cp.podServers.set(before.ip, { status: 200, body: "ok\n" });
  }

  /** Waits until the slices drain exactly the sick pod and the policy's status says so; returns when (epoch ms). */
  async function converged(what: string): Promise<number> {
    return waitFor(
      () => {
        const w = last;
        if (!w) return false;
        const ready = new Map(w.slices.flatMap((s) => s.endpoints.map((e) => [e.pod, e.ready] as const)));
        const ok = pods.every((p, i) => ready.get(p.name) === (i !== sick));
        const status = w.policies[0]?.status;
        return ok && status?.drained === 1 && status.pods[pods[sick]!.name] === "Unhealthy" && w.at;
      },
      {
        timeoutMs: CONVERGE_TIMEOUT_MS,
        intervalMs: 100,
        what: `the operator to converge after ${what}: only ${pods[sick]?.name} drained`,
      },
    );
  }

  /** One line per scenario: time to converge from the fault's start (the health change comes with it) and from its end. */
  function report(scenario: string, t: { start: number; end: number; at: number }, extra = ""): void {
    results.push(
      `${scenario}: converged ${t.at - t.start} ms after the fault began, ${Math.max(0, t.at - t.end)} ms after it ended; ${samples} worlds checked so far${extra ? `; ${extra}` : ""}`,
    );
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "healthprobe-chaos-"));
    cp = await startControlPlane({ users: { "operator-a": ["system:masters"], "operator-b": ["system:masters"] } });
    const kc = new KubeConfig();
    kc.loadFromString(cp.kubeconfig("admin"));
    const api = KubernetesObjectApi.makeApiClient(kc);
    await installCrd(api);
    for (const name of [NS, OPERATOR_NS]) await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    await api.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: NS },
      spec: { ports: [{ name: "http", port: 80, targetPort: PORT, protocol: "TCP" }] },
    } as never);
    const labels = { app: "web" };
    await api.create({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web", namespace: NS },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [{ name: "web", image: "busybox:1.36", ports: [{ name: "http", containerPort: PORT }] }],
          },
        },
      },
    } as never);
    reader = new RealWorldReader(cp.kubeconfig("admin"));
    const world = await waitFor(
      async () => {
        const w = await reader.read(NS);
        return w && w.pods.filter((p) => p.ready && p.ip).length === REPLICAS && w;
      },
      { timeoutMs: 90_000, what: `${REPLICAS} ready pods` },
    );
    pods = world.pods.map((p) => ({ name: p.name, ip: p.ip! })).sort((a, b) => a.name.localeCompare(b.name));
    for (const [i, p] of pods.entries())
      await cp.podServers.set(p.ip, i === sick ? { status: 503, body: "unhealthy\n" } : { status: 200, body: "ok\n" });
    await api.create({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: "web", namespace: NS },
      spec: {
        serviceName: "web",
        selector: { matchLabels: labels },
        probe: { port: PORT, path: "/healthz", periodSeconds: 1, timeoutSeconds: 1 },
        evaluation: { failureThreshold: 2, successThreshold: 1 },
        drain: { enabled: true, maxUnhealthyPercent: 50 },
        // Pods keep their names: each scenario moves the failing endpoint and waits for the drain to follow.
        replacement: { enabled: false },
      },
    } as never);
    await startReplica("operator-a");
    sampler = sample();
    await converged("the start");
  }, 300_000);

  afterAll(async () => {
    sampling = false;
    await sampler;
    for (const r of replicas) {
      await r.op.stop();
      await r.proxy.stop();
    }
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // Numbers for the README and the report, not assertions.
    console.log(`chaos on the real control plane:\n${results.join("\n")}`);
  }, 120_000);

  const holdsInvariants = () => expect(violations).toEqual([]);

  it("recovers from etcd killed with SIGKILL and restarted on the same data directory", async () => {
    await moveSickness();
    const killed = Date.now();
    await cp.restart("etcd", { signal: "SIGKILL", downMs: 5_000 });
    const back = Date.now();
    const at = await converged("etcd's restart");
    report(
      "etcd SIGKILL, down 5 s, restarted",
      { start: killed, end: back, at },
      `API server serving again ${back - killed} ms after the kill`,
    );
    holdsInvariants();
  }, 300_000);

  // SIGTERM: kube-apiserver shuts down gracefully (it keeps serving while it drains); SIGKILL: a crash.
  it.each(["SIGTERM", "SIGKILL"] as const)(
    "recovers from kube-apiserver stopped with %s and restarted",
    async (signal) => {
      await moveSickness();
      const stopped = Date.now();
      await cp.restart("kube-apiserver", { signal, downMs: 2_000 });
      const back = Date.now();
      const at = await converged("kube-apiserver's restart");
      report(
        `kube-apiserver ${signal}, down 2 s, restarted`,
        { start: stopped, end: back, at },
        `serving again ${back - stopped} ms after the signal`,
      );
      holdsInvariants();
    },
    300_000,
  );

  it("stops writing before its lease can expire while cut off, and resumes once healed", async () => {
    const a = replicas[0]!;
    const cut = Date.now();
    a.proxy.partition();
    await moveSickness();
    // The fault is held for longer than a lease: that is the scenario, not a synchronisation.
    await new Promise((r) => setTimeout(r, LEASE_MS + 5_000));
    const renewed = lastRenewal(a.proxy.log, cut);
    const late = actingWrites(a.proxy.log, renewed + RENEW_DEADLINE_MS);
    a.proxy.clear();
    const healed = Date.now();
    const at = await converged("the partition healed");
    report(
      `one replica cut off (every connection reset) for ${LEASE_MS + 5_000} ms`,
      { start: cut, end: healed, at },
      `writes attempted after its renew deadline: ${late.length}`,
    );
    expect(late.map((e) => `${e.verb} ${e.path} at +${e.start - renewed} ms`)).toEqual([]);
    expect(actingWrites(a.proxy.log, healed).length).toBeGreaterThan(0);
    holdsInvariants();
  }, 300_000);

  it("fences a partitioned leader before the other replica takes over, and the isolated one writes nothing after its renew deadline", async () => {
    const a = replicas[0]!;
    const b = await startReplica("operator-b");
    const coordination = (() => {
      const kc = new KubeConfig();
      kc.loadFromString(cp.kubeconfig("admin"));
      return kc.makeApiClient(CoordinationV1Api);
    })();
    const holder = async () =>
      (await coordination.readNamespacedLease({ name: "healthprobe-operator", namespace: OPERATOR_NS })).spec
        ?.holderIdentity;
    expect(await holder()).toBe(a.identity);
    const cut = Date.now();
    a.proxy.partition();
    await moveSickness();
    await waitFor(async () => (await holder()) === b.identity, {
      timeoutMs: 90_000,
      intervalMs: 200,
      what: `${b.name} to take the lease`,
    });
    const tookOver = Date.now();
    const at = await converged("the leader's partition");
    const renewed = lastRenewal(a.proxy.log, cut);
    const deadline = renewed + RENEW_DEADLINE_MS;
    const late = actingWrites(a.proxy.log, deadline);
    const firstByB = Math.min(...actingWrites(b.proxy.log, cut).map((e) => e.start));
    a.proxy.clear();
    // Healed: the old leader sees the other's lease and stays a follower.
    const healed = Date.now();
    await waitFor(() => a.proxy.log.some((e) => isLease(e) && e.start > healed && e.code === 200), {
      timeoutMs: 30_000,
      what: `${a.name} to reach the API server again`,
    });
    const afterHeal = actingWrites(a.proxy.log, healed);
    report(
      "two replicas, the leader partitioned (until the other converged)",
      { start: cut, end: at, at },
      `lease taken over ${tookOver - cut} ms after the cut; the other's first write ${firstByB - deadline} ms after the isolated one's renew deadline; isolated writes after its deadline: ${late.length}, after healing: ${afterHeal.length}`,
    );
    expect(late).toEqual([]);
    expect(firstByB).toBeGreaterThan(deadline);
    expect(afterHeal).toEqual([]);
    holdsInvariants();
  }, 300_000);

  it(`converges after each of ${FAULT_ROUNDS} rounds of seeded API faults on both replicas' proxies`, async () => {
    const rng = new Rng(FAULT_SEED);
    const times: string[] = [];
    for (let round = 0; round < FAULT_ROUNDS; round++) {
      // Two different faults a round.
      const first = rng.int(0, ROUND_FAULTS.length - 1);
      const picked = [
        ROUND_FAULTS[first]!,
        ROUND_FAULTS[(first + rng.int(1, ROUND_FAULTS.length - 1)) % ROUND_FAULTS.length]!,
      ];
      for (const r of replicas) for (const [, apply] of picked) apply(r.proxy);
      const began = Date.now();
      await moveSickness();
      // The faults stay for a few probe periods, so the operator meets them while it reacts.
      await new Promise((r) => setTimeout(r, 4_000));
      for (const r of replicas) {
        r.proxy.clear();
        // A stalled watch stays stalled once its rule is gone: ending it is part of clearing.
        r.proxy.dropWatches();
      }
      const cleared = Date.now();
      const at = await converged(`round ${round} (${picked.map(([n]) => n).join(" + ")})`);
      times.push(`${picked.map(([n]) => n).join(" + ")}: ${at - began} / ${Math.max(0, at - cleared)} ms`);
    }
    const injected = replicas.flatMap((r) => r.proxy.log).filter((e) => e.faults.length > 0).length;
    results.push(
      `seeded API faults (seed ${FAULT_SEED}, 4 s a round, converged after the round began / its faults cleared): ${times.join("; ")}; ${injected} requests faulted; ${samples} worlds checked`,
    );
    holdsInvariants();
  }, 600_000);
});
