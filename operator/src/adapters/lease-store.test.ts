import { describe, it, expect, beforeAll, beforeEach, afterAll, afterEach } from "@jest/globals";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { LeaderElector, LeaseConflictError, type LeaseStore } from "../runtime/leader-election.js";
import { FakeClock, flushMicrotasks } from "../runtime/testing/fake-clock.js";
import { kubeClientOf, loadKubeConfig, makeApis } from "./kube-config.js";
import { kubeLeaseStore } from "./lease-store.js";

const LEASES = { group: "coordination.k8s.io", version: "v1", resource: "leases" };
const NAMESPACE = "healthprobe-system";

/** How far the electors' clock moves at a time while the test drives it. */
const STEP_MS = 50;

let server: TestApiServer;
let clock: FakeClock;
const electors: LeaderElector[] = [];
/** Lease requests on their way: the clock only moves while there are none. */
const inFlight = new Set<Promise<unknown>>();

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  const apis = makeApis(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("admin") }));
  await apis.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
});

beforeEach(() => {
  clock = new FakeClock();
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

/** The store, with each request counted in flight until it settles. */
function tracked(store: LeaseStore): LeaseStore {
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    p.then(
      () => inFlight.delete(p),
      () => inFlight.delete(p),
    );
    return p;
  };
  return {
    get: () => track(store.get()),
    create: (l) => track(store.create(l)),
    update: (l) => track(store.update(l)),
  };
}

/** Fails the test at once if two electors lead together, whenever one starts leading or the clock moves. */
function expectOneLeader(): void {
  const leaders = electors.filter((e) => e.isLeader()).map((e) => e.identity);
  if (leaders.length > 1) throw new Error(`two leaders at once: ${leaders.join(", ")}`);
}

/** One replica: its own client (user = identity) and elector on the test's clock, with short test durations. */
function aReplica(
  identity: string,
  lease: string,
  durations = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
) {
  const kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig(identity) });
  const log: string[] = [];
  let stoppedAt: number | undefined;
  const elector = new LeaderElector({
    store: tracked(kubeLeaseStore(kubeClientOf(kc), NAMESPACE, lease)),
    identity,
    clock,
    ...durations,
    onStartedLeading: () => {
      log.push("started");
      expectOneLeader();
    },
    onStoppedLeading: () => {
      log.push("stopped");
      stoppedAt = clock.now();
    },
  });
  electors.push(elector);
  return { elector, log, stoppedAt: () => stoppedAt };
}

/**
 * Lets lease time pass until `until` holds: each Lease request settles first, then the clock moves
 * a step. Request latency costs no lease time, so a loaded machine cannot make a lease expire.
 */
async function runUntil(until: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const end = clock.now() + limitMs;
  for (;;) {
    do {
      await Promise.allSettled([...inFlight]);
      await flushMicrotasks();
    } while (inFlight.size > 0);
    expectOneLeader();
    if (until()) return;
    if (clock.now() >= end) throw new Error(`${what}: not within ${limitMs} ms of lease time`);
    clock.advance(STEP_MS);
  }
}

const renewalsBy = (identity: string) =>
  server.requestLog.filter((e) => e.resource === "leases" && e.verb === "update" && e.user === identity).length;

describe("leader election on the API test server", () => {
  it("creates, reads and updates a Lease with optimistic concurrency", async () => {
    const kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig("admin") });
    const name = aLeaseName();
    const store = kubeLeaseStore(kubeClientOf(kc), NAMESPACE, name);
    expect(await store.get()).toBeUndefined();
    const now = Date.now();
    const created = await store.create({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    });
    expect(created).toMatchObject({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      renewTime: now,
      leaseTransitions: 0,
    });
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
    await runUntil(() => a.elector.isLeader() || b.elector.isLeader(), "a leader");
    const [leader, follower] = a.elector.isLeader() ? [a, b] : [b, a];
    // Several renewals pass with exactly one leader.
    const renewsBefore = renewalsBy(leader.elector.identity);
    await runUntil(() => renewalsBy(leader.elector.identity) >= renewsBefore + 5, "five renewals");
    expect(follower.elector.isLeader()).toBe(false);

    await leader.elector.stop();
    expect(leader.elector.isLeader()).toBe(false);
    await runUntil(() => follower.elector.isLeader(), "the follower to take over");
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
    await runUntil(() => a.elector.isLeader(), "a to lead");
    const b = aReplica("replica-b", lease, durations);
    b.elector.start();
    await runUntil(() => b.elector.observedHolder() === "replica-a", "b to see a holding the lease");
    const releasedAt = clock.now();
    await a.elector.release();
    expect(a.elector.isLeader()).toBe(false);
    expect(server.store.get(LEASES, NAMESPACE, lease)!.spec).toMatchObject({
      holderIdentity: "",
      leaseDurationSeconds: 1,
    });
    // Within a retry period or two of lease time, not the 60 s a's lease had left.
    await runUntil(() => b.elector.isLeader(), "b to take over", durations.leaseDurationMs / 2);
    expect(clock.now() - releasedAt).toBeLessThanOrEqual(durations.retryPeriodMs * 2.2 + STEP_MS);
  });

  it("stops leading before its lease can expire when the API server refuses renewals", async () => {
    const lease = aLeaseName();
    const a = aReplica("replica-a", lease);
    a.elector.start();
    await runUntil(() => a.elector.isLeader(), "a to lead");
    server.faults.failRate({ verb: "update", resource: "leases", rate: 1, code: 500 });
    try {
      await runUntil(() => !a.elector.isLeader(), "a to stop leading");
      // Fenced at the renew deadline after the last renewal the server took, strictly before the
      // lease duration, which is when anyone else could take it.
      const lastRenew = Date.parse(server.store.get(LEASES, NAMESPACE, lease)!.spec.renewTime);
      expect(a.stoppedAt()! - lastRenew).toBe(1000);
      expect(a.log).toEqual(["started", "stopped"]);
    } finally {
      server.faults.clear();
    }
  });
});
