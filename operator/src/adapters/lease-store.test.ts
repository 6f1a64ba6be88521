import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { startApiServer, type TestApiServer } from "../../../test/apiserver/index.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { LeaderElector, LeaseConflictError } from "../runtime/leader-election.js";
import { kubeClientOf, loadKubeConfig, makeApis } from "./kube-config.js";
import { kubeLeaseStore } from "./lease-store.js";

const LEASES = { group: "coordination.k8s.io", version: "v1", resource: "leases" };
const NAMESPACE = "healthprobe-system";

let server: TestApiServer;
const electors: LeaderElector[] = [];

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  const apis = makeApis(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("admin") }));
  await apis.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
});

afterEach(async () => {
  for (const e of electors.splice(0)) await e.stop();
});

afterAll(async () => {
  await server.stop();
});

let leaseCounter = 0;
function aLeaseName(): string {
  return `healthprobe-operator-${++leaseCounter}`;
}

/** One replica: its own client (user = identity) and elector, with short test durations. */
function aReplica(identity: string, lease: string, durations = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 }) {
  const kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig(identity) });
  const log: string[] = [];
  const elector = new LeaderElector({
    store: kubeLeaseStore(kubeClientOf(kc), NAMESPACE, lease),
    identity,
    ...durations,
    onStartedLeading: () => log.push("started"),
    onStoppedLeading: () => log.push("stopped"),
  });
  electors.push(elector);
  return { elector, log };
}

/** Polls until the predicate holds, failing at once if two replicas ever lead together. */
async function watchLeaders(replicas: LeaderElector[], until: () => boolean, what: string): Promise<void> {
  await waitFor(
    () => {
      const leaders = replicas.filter((r) => r.isLeader()).length;
      if (leaders > 1) throw new Error("two leaders at once");
      return until();
    },
    { timeoutMs: 15_000, intervalMs: 5, what },
  );
}

describe("leader election on the API test server", () => {
  it("creates, reads and updates a Lease with optimistic concurrency", async () => {
    const kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig("admin") });
    const name = aLeaseName();
    const store = kubeLeaseStore(kubeClientOf(kc), NAMESPACE, name);
    expect(await store.get()).toBeUndefined();
    const now = Date.now();
    const created = await store.create({ holderIdentity: "a", leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 0 });
    expect(created).toMatchObject({ holderIdentity: "a", leaseDurationSeconds: 15, renewTime: now, leaseTransitions: 0 });
    await expect(store.create(created)).rejects.toBeInstanceOf(LeaseConflictError);
    const updated = await store.update({ ...created, renewTime: now + 2000 });
    expect(updated.renewTime).toBe(now + 2000);
    await expect(store.update({ ...created, renewTime: now + 4000 })).rejects.toBeInstanceOf(LeaseConflictError);
    const stored = server.store.get(LEASES, NAMESPACE, name)!;
    expect(stored.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("lets exactly one of two replicas lead, then hands over when the leader stops renewing", async () => {
    const lease = aLeaseName();
    const a = aReplica("replica-a", lease);
    const b = aReplica("replica-b", lease);
    a.elector.start();
    b.elector.start();
    await watchLeaders([a.elector, b.elector], () => a.elector.isLeader() || b.elector.isLeader(), "a leader");
    const [leader, follower] = a.elector.isLeader() ? [a, b] : [b, a];
    // Several renewals pass with exactly one leader.
    const renewsBefore = server.requestLog.filter((e) => e.resource === "leases" && e.verb === "update" && e.user === leader.elector.identity).length;
    await watchLeaders([a.elector, b.elector], () => server.requestLog.filter((e) => e.resource === "leases" && e.verb === "update" && e.user === leader.elector.identity).length >= renewsBefore + 5, "five renewals");
    expect(follower.elector.isLeader()).toBe(false);

    await leader.elector.stop();
    expect(leader.elector.isLeader()).toBe(false);
    await watchLeaders([a.elector, b.elector], () => follower.elector.isLeader(), "the follower to take over");
    const stored = server.store.get(LEASES, NAMESPACE, lease)!;
    expect(stored.spec).toMatchObject({ holderIdentity: follower.elector.identity, leaseTransitions: 1 });
    expect(leader.log).toEqual(["started", "stopped"]);
    expect(follower.log).toEqual(["started"]);
  });

  it("hands over at once when the leader releases the lease on shutdown", async () => {
    // A long lease: the follower can only get it quickly through the release.
    const durations = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 200 };
    const lease = aLeaseName();
    const a = aReplica("replica-a", lease, durations);
    a.elector.start();
    await waitFor(() => a.elector.isLeader(), { what: "a to lead" });
    const b = aReplica("replica-b", lease, durations);
    b.elector.start();
    await waitFor(() => b.elector.observedHolder() === "replica-a", { what: "b to see a holding the lease" });
    const releasedAt = Date.now();
    await a.elector.release();
    expect(a.elector.isLeader()).toBe(false);
    expect(server.store.get(LEASES, NAMESPACE, lease)!.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    await watchLeaders([a.elector, b.elector], () => b.elector.isLeader(), "b to take over");
    expect(Date.now() - releasedAt).toBeLessThan(durations.leaseDurationMs / 2);
  });

  it("stops leading before its lease can expire when the API server refuses renewals", async () => {
    const lease = aLeaseName();
    const a = aReplica("replica-a", lease);
    a.elector.start();
    await waitFor(() => a.elector.isLeader(), { what: "a to lead" });
    server.faults.failRate({ verb: "update", resource: "leases", rate: 1, code: 500 });
    try {
      const lastRenew = Date.parse(server.store.get(LEASES, NAMESPACE, lease)!.spec.renewTime);
      await waitFor(() => !a.elector.isLeader(), { what: "a to stop leading" });
      // Fenced strictly before the lease duration, which is when anyone else could take it.
      expect(Date.now() - lastRenew).toBeLessThan(1500);
      // The callback runs on the deadline timer, which a loaded machine may run a little after this poll.
      await waitFor(() => a.log.includes("stopped"), { what: "onStoppedLeading" });
      expect(a.log).toEqual(["started", "stopped"]);
    } finally {
      server.faults.clear();
    }
  });
});
