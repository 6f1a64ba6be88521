// Two operator processes on one API server, with leader election: one writer at a time, a
// takeover within the lease after the leader dies, no pod replaced twice across the change,
// and a clean hand-over on SIGTERM.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Watch } from "@kubernetes/client-node";
import { requestsBy, type RequestLogEntry } from "../../hack/apiserver/index.js";
import { MANAGED_BY_OPERATOR } from "../../operator/src/domain/endpoint-slice-types.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, endpointReadiness, kubeConfigFor, type Obj } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { podEntry } from "./support/queries.js";

const LEASE_MS = 15_000;
const RETRY_MS = 2_000;
/** The acquire loop waits retryPeriod plus up to 1.2 × retryPeriod of jitter, as client-go does. */
const MAX_ACQUIRE_WAIT_MS = RETRY_MS * 2.2;
/** Request latency and timer lateness on a busy machine; the bounds themselves come from the algorithm. */
const SLACK_MS = 1_000;
const WRITE_KINDS = new Set(["endpointslices", "healthprobepolicies", "events", "pods"]);

type LeaderProcess = OperatorProcess & { identity: string; healthPort: number };

let dir: string;
const procs: LeaderProcess[] = [];

// Declared before the bed, so it runs before the bed closes: the processes end before their API server.
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
    if (process.env.DUMP_LOGS) console.log(p.user, JSON.stringify(p.logs.slice(-30), null, 1));
  }
  rmSync(dir, { recursive: true, force: true });
});

const bed = useBed();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hp-leader-"));
});

/** The operator command in its own process, with leader election, as `user`; resolves once it is ready. */
async function startProcess(user: string): Promise<LeaderProcess> {
  const proc = startOperatorProcess({ server: bed.cluster.server, dir, user, flags: ["--leader-elect"] });
  const leader = proc as LeaderProcess;
  procs.push(leader);
  Object.assign(leader, await proc.started());
  return leader;
}

async function leaseHolder(): Promise<string | undefined> {
  const lease = await bed.cluster.get("coordination.k8s.io/v1", "Lease", "healthprobe-operator", "healthprobe-system");
  return lease?.spec?.holderIdentity as string | undefined;
}

/** Writes that only the leader may make: slices, policy status, Events, evictions and pod deletes. */
function leaderWrites(user: string): RequestLogEntry[] {
  return requestsBy(bed.cluster.server.requestLog, { user, writes: true }).filter((e) => WRITE_KINDS.has(e.resource));
}

function at(e: RequestLogEntry): number {
  return Date.parse(e.time);
}

/** Serves every pod that has an IP, so pods the ReplicaSet creates later answer probes too. */
async function serveAllPods(): Promise<Obj[]> {
  const pods = await bed.cluster.list("v1", "Pod");
  for (const p of pods)
    if (p.status?.podIP && !p.metadata?.deletionTimestamp) await bed.farm.serve(p.status.podIP as string);
  return pods;
}

async function givenReplicaSet(replicas: number): Promise<Obj[]> {
  await bed.cluster.create(aService("web", bed.cluster.namespace));
  await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, replicas));
  return waitFor(
    async () => {
      const pods = (await serveAllPods()).filter((p) => p.status?.podIP);
      return pods.length === replicas
        ? pods.sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!))
        : undefined;
    },
    { what: `${replicas} pods with IPs` },
  );
}

async function policyStatus(): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
}

describe("leader election across two operator processes", () => {
  it("lets only the leader write, takes over within the lease after SIGKILL, and replaces a pod once", async () => {
    const pods = await givenReplicaSet(3);
    const sick = pods[0]!;
    bed.farm.failing(sick.status.podIP);

    const a = await startProcess("operator-a");
    await waitFor(async () => (await leaseHolder()) === a.identity, { what: "operator-a to hold the lease" });
    const b = await startProcess("operator-b");

    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        failureThreshold: 2,
        replacement: { enabled: true, after: "30s", maxPerHour: 10, maxPerDay: 10, method: "Evict" },
      }),
    );
    const unhealthy = await waitFor(
      async () => {
        const st = await policyStatus();
        const entry = podEntry(st, sick.metadata!.name!);
        return entry?.state === "Unhealthy" &&
          entry.unhealthySince &&
          (await endpointReadiness(bed.cluster, "web")).get(sick.metadata!.name!) === false
          ? entry
          : undefined;
      },
      { timeoutMs: 15_000, what: "the failing pod Unhealthy in status and drained" },
    );
    expect(unhealthy.replaceAfter).toBeDefined();

    // Only the leader has written anything so far; the standby has not even touched the Lease.
    expect(leaderWrites("operator-a").length).toBeGreaterThan(0);
    expect(requestsBy(bed.cluster.server.requestLog, { user: "operator-b", writes: true })).toEqual([]);

    const lastRenewalByA = () =>
      requestsBy(bed.cluster.server.requestLog, {
        user: "operator-a",
        resource: "leases",
        writes: true,
        succeeded: true,
      }).at(-1)!;
    a.child.kill("SIGKILL");
    const killedAt = Date.now();
    await a.exited;
    const renewedAt = at(lastRenewalByA());

    await waitFor(async () => (await leaseHolder()) === b.identity, {
      timeoutMs: LEASE_MS + 2 * MAX_ACQUIRE_WAIT_MS + 2_000,
      what: "operator-b to take the lease",
    });
    const takeover = requestsBy(bed.cluster.server.requestLog, {
      user: "operator-b",
      resource: "leases",
      writes: true,
      succeeded: true,
    })[0]!;
    // B judges expiry from when it first saw A's last renewal, so that is where the lease duration starts.
    const seenByB = requestsBy(bed.cluster.server.requestLog, {
      user: "operator-b",
      resource: "leases",
      verb: "get",
    }).find((e) => at(e) >= renewedAt)!;
    const sinceKill = at(takeover) - killedAt;
    const sinceSeen = at(takeover) - at(seenByB);
    console.log(`takeover: ${sinceKill} ms after SIGKILL, ${sinceSeen} ms after the standby saw the last renewal`);
    expect(sinceSeen).toBeLessThanOrEqual(LEASE_MS + MAX_ACQUIRE_WAIT_MS + SLACK_MS);
    expect(sinceKill).toBeLessThanOrEqual(LEASE_MS + 2 * MAX_ACQUIRE_WAIT_MS + SLACK_MS);
    expect(sinceKill).toBeGreaterThanOrEqual(LEASE_MS - (killedAt - renewedAt) - SLACK_MS);

    // The new leader replaces the pod once its window (kept in status across the change) has passed.
    const evictions = () =>
      requestsBy(bed.cluster.server.requestLog, { resource: "pods", subresource: "eviction", verb: "create" });
    await waitFor(() => evictions().length > 0, { timeoutMs: 40_000, what: "the sick pod evicted" });
    const replacement = await waitFor(
      async () => {
        const live = (await serveAllPods()).filter((p) => p.status?.podIP && !p.metadata?.deletionTimestamp);
        const fresh = live.find((p) => !pods.some((q) => q.metadata!.uid === p.metadata!.uid));
        return live.length === 3 &&
          fresh &&
          (await endpointReadiness(bed.cluster, "web")).get(fresh.metadata!.name!) === true
          ? fresh
          : undefined;
      },
      { timeoutMs: 20_000, what: "the replacement pod ready in the slice" },
    );
    const st = await waitFor(
      async () => {
        const s = await policyStatus();
        return s?.healthy === 3 && s.replacements?.length === 1 ? s : undefined;
      },
      { what: "status: three Healthy, one replacement in the ledger" },
    );
    expect(st.replacements[0]).toMatchObject({ pod: sick.metadata!.name, uid: sick.metadata!.uid, method: "Evict" });
    expect(replacement.metadata!.name).not.toBe(sick.metadata!.name);

    // One eviction per pod across both processes, made by the new leader.
    const perPod = new Map<string, number>();
    for (const e of evictions()) perPod.set(e.name, (perPod.get(e.name) ?? 0) + 1);
    expect([...perPod]).toEqual([[sick.metadata!.name, 1]]);
    expect(evictions()[0]!.user).toBe("operator-b");

    // Never two writers: nothing of A's after B took over, nothing of B's before. (Not "nothing
    // of A's after the kill": the log times a request when this process reads it, and a write A
    // sent just before it died can be read a few milliseconds after kill() returned.)
    expect(leaderWrites("operator-a").filter((e) => at(e) >= at(takeover))).toEqual([]);
    expect(leaderWrites("operator-b").filter((e) => at(e) < at(takeover))).toEqual([]);
    expect(leaderWrites("operator-b").length).toBeGreaterThan(0);
  }, 90_000);

  it("on SIGTERM the leader releases the lease, exits 0 with its writes whole, and the standby takes over at once", async () => {
    const pods = await givenReplicaSet(4);
    bed.farm.failing(pods[0]!.status.podIP);
    const a = await startProcess("operator-a");
    await waitFor(async () => (await leaseHolder()) === a.identity, { what: "operator-a to hold the lease" });
    const b = await startProcess("operator-b");
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { failureThreshold: 1 }));
    await waitFor(
      async () => (await policyStatus())?.drained === 1 && (await endpointReadiness(bed.cluster, "web")).size === 4,
      { what: "one pod drained" },
    );

    // Every holder the Lease passes through, as a watcher sees it.
    const holders: string[] = [];
    const watch = await new Watch(kubeConfigFor(bed.cluster.server)).watch(
      "/apis/coordination.k8s.io/v1/namespaces/healthprobe-system/leases",
      {},
      (_type, lease: { spec?: { holderIdentity?: string } }) => {
        const h = lease.spec?.holderIdentity ?? "";
        if (holders.at(-1) !== h) holders.push(h);
      },
      () => undefined,
    );
    try {
      await waitFor(() => holders.length > 0, { what: "the Lease watch to start" });
      // Change health just before the signal, so the leader is busy writing when it is asked to stop.
      bed.farm.healthy(pods[0]!.status.podIP);
      bed.farm.failing(pods[1]!.status.podIP);
      a.child.kill("SIGTERM");
      const termAt = Date.now();
      const exit = await a.exited;
      const exitedAt = Date.now();
      expect(exit).toEqual({ code: 0, signal: null });

      // What A left behind is whole: valid slices and status (B has not written yet, or only whole objects).
      await expectWholeState(4);

      await waitFor(async () => (await leaseHolder()) === b.identity, {
        timeoutMs: MAX_ACQUIRE_WAIT_MS + 2_000,
        what: "operator-b to take the released lease",
      });
      const takeover = requestsBy(bed.cluster.server.requestLog, {
        user: "operator-b",
        resource: "leases",
        writes: true,
        succeeded: true,
      })[0]!;
      console.log(`SIGTERM: exit after ${exitedAt - termAt} ms; takeover ${at(takeover) - exitedAt} ms after exit`);
      // The store has it; the watcher sees it a moment later.
      await waitFor(() => holders.at(-1) === b.identity, {
        timeoutMs: 5_000,
        what: "the Lease watch to see operator-b",
      });
      expect(holders).toEqual([a.identity, "", b.identity]);
      expect(at(takeover) - exitedAt).toBeLessThanOrEqual(MAX_ACQUIRE_WAIT_MS + SLACK_MS);

      // The new leader finishes what the health change asked for.
      await waitFor(
        async () => {
          const r = await endpointReadiness(bed.cluster, "web");
          return r.get(pods[0]!.metadata!.name!) === true && r.get(pods[1]!.metadata!.name!) === false;
        },
        { what: "the new leader to restore pod 0 and drain pod 1" },
      );
      await expectWholeState(4);
      expect(leaderWrites("operator-a").filter((e) => at(e) > exitedAt)).toEqual([]);
      expect(leaderWrites("operator-b").filter((e) => at(e) < at(takeover))).toEqual([]);
    } finally {
      watch.abort();
    }
  }, 90_000);
});

/** Slices and status as a whole: every target once, owned, labelled, with ports; status counts add up. */
async function expectWholeState(targets: number): Promise<void> {
  const slices = await bed.cluster.list(
    "discovery.k8s.io/v1",
    "EndpointSlice",
    bed.cluster.namespace,
    "kubernetes.io/service-name=web",
  );
  const names: string[] = [];
  for (const s of slices) {
    expect(s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"]).toBe(MANAGED_BY_OPERATOR);
    expect(s.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Service", name: "web" });
    expect(s.ports).toEqual([expect.objectContaining({ name: "http", port: 8080, protocol: "TCP" })]);
    for (const e of s.endpoints ?? []) {
      names.push(e.targetRef.name);
      expect(e.addresses).toHaveLength(1);
      expect(typeof e.conditions.ready).toBe("boolean");
    }
  }
  expect(names).toHaveLength(targets);
  expect(new Set(names).size).toBe(targets);
  const st = (await policyStatus())!;
  expect(st.targets).toBe(targets);
  expect(st.healthy + st.unhealthy + st.unknown).toBe(targets);
  expect(st.pods).toHaveLength(targets);
  expect(st.pods.filter((p: { drained?: boolean }) => p.drained).length).toBe(st.drained);
}
