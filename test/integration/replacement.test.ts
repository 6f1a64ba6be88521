// Replacement end to end: the operator against the API test server with its ReplicaSet
// controller on, pods as real HTTP servers, and an offset clock so the replacement window
// passes on demand instead of in real time.
import { describe, expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aReplicaSet, aService, endpointReadiness, podIP, type Obj } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const AFTER_MS = 30_000;
/** Generous deadlines: the suite shares two cores with everything else. */
const WAIT_MS = 20_000;

const bed = useBed();

function replacing(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 3, ...extra };
}

function livePods(n: number, app = "web"): Promise<Obj[]> {
  return queries.livePods(bed, n, { app, timeoutMs: WAIT_MS });
}

function statusOf(policy = "web"): Promise<Record<string, any> | undefined> {
  return queries.policyStatus(bed.cluster, policy);
}

const podEntry = queries.podEntry;

const condition = queries.conditionOf;

function evictions(pod?: string) {
  return queries.evictionsOf(bed.cluster, pod === undefined ? {} : { pod });
}

function podDeletes() {
  return requestsBy(bed.cluster.server.requestLog, { user: "operator", resource: "pods", verb: "delete" });
}

function operatorLedger(): Promise<Array<Record<string, string>>> {
  return queries.operatorLedger(bed.cluster);
}

/** Waits until the policy's status shows the pod Unhealthy with its window, and returns that entry. */
async function unhealthyInStatus(name: string, policy = "web"): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const e = podEntry(await statusOf(policy), name);
      return e?.state === "Unhealthy" && e.replaceAfter ? e : undefined;
    },
    { timeoutMs: WAIT_MS, what: `${name} Unhealthy in the status of ${policy}` },
  );
}

async function blockedCondition(reason: string, policy = "web"): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const c = condition(await statusOf(policy), "ReplacementBlocked");
      return c?.status === "True" && c.reason === reason ? c : undefined;
    },
    { timeoutMs: WAIT_MS, what: `ReplacementBlocked=True reason ${reason} on ${policy}` },
  );
}

/** Reconciles finished so far, from the operator's own metrics. */
async function reconcileCount(): Promise<number> {
  const metric = await bed.operator.metrics.registry.getSingleMetric("healthprobe_reconcile_duration_seconds")?.get();
  const policyCounts = metric?.values.filter(
    (v) => (v as { metricName?: string }).metricName?.endsWith("_count") && v.labels.controller === "policy",
  );
  return policyCounts?.reduce((n, v) => n + v.value, 0) ?? 0;
}

describe("replacement", () => {
  it("evicts a pod Unhealthy for `after`; its ReplicaSet recreates it and the new pod is probed and admitted", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 2));
    const [victim, survivor] = await livePods(2);
    const victimName = victim!.metadata!.name!;
    const victimUid = victim!.metadata!.uid!;
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { replacement: replacing() }));
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: WAIT_MS, what: "both pods Healthy" });

    bed.farm.failing(victim!.status.podIP);
    const waiting = await unhealthyInStatus(victimName);
    // While waiting, the pod shows when its window ends; nothing is blocked, nothing evicted.
    expect(Date.parse(waiting.replaceAfter) - Date.parse(waiting.unhealthySince)).toBe(AFTER_MS);
    expect(condition(await statusOf(), "ReplacementBlocked")?.status).toBe("False");
    expect(evictions()).toHaveLength(0);

    bed.clock.advance(AFTER_MS);
    await waitFor(async () => !(await bed.cluster.get("v1", "Pod", victimName)), {
      timeoutMs: WAIT_MS,
      what: `${victimName} to be gone`,
    });
    const [a, b] = await livePods(2);
    const fresh = [a!, b!].find((p) => p.metadata!.name !== survivor!.metadata!.name)!;
    expect(fresh.metadata!.uid).not.toBe(victimUid);
    bed.farm.healthy(fresh.status.podIP);

    // The new pod is probed, Healthy and back in rotation.
    const settled = await waitFor(
      async () => {
        const st = await statusOf();
        return st?.healthy === 2 && podEntry(st, fresh.metadata!.name!)?.state === "Healthy" ? st : undefined;
      },
      { timeoutMs: WAIT_MS, what: "the new pod Healthy in status" },
    );
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get(fresh.metadata!.name!) === true, {
      timeoutMs: WAIT_MS,
      what: "the new pod ready in the EndpointSlice",
    });

    expect(settled.replacements).toEqual([
      { pod: victimName, uid: victimUid, time: expect.any(String), method: "Evict" },
    ]);
    expect(settled.replacedInLastDay).toBe(1);
    expect(Date.parse(settled.replacements[0].time) - Date.parse(waiting.unhealthySince)).toBeGreaterThanOrEqual(
      AFTER_MS,
    );
    expect(await operatorLedger()).toEqual([
      expect.objectContaining({ policy: "shop/web", pod: victimName, uid: victimUid, method: "Evict" }),
    ]);
    expect(evictions().map((e) => [e.name, e.code])).toEqual([[victimName, 201]]);

    const replaced = await waitFor(
      async () => {
        const events = (await bed.cluster.list("events.k8s.io/v1", "Event", bed.cluster.namespace)).filter(
          (e) => e.reason === "Replaced",
        );
        return events.length >= 2 ? events : undefined;
      },
      { timeoutMs: WAIT_MS, what: "Replaced Events" },
    );
    expect(replaced.map((e) => `${e.regarding.kind}/${e.regarding.name}`).sort()).toEqual([
      `HealthProbePolicy/web`,
      `Pod/${victimName}`,
    ]);
    expect(replaced[0]!.type).toBe("Normal");
    // Says how and why, once (the method used to be repeated after a colon).
    expect(replaced[0]!.note).toMatch(
      new RegExp(
        `^pod ${victimName} evicted through the Eviction API after being Unhealthy for \\d+[smh]; diagnostics kept in ConfigMap web-diag-${victimName}-[0-9a-f]{8}$`,
      ),
    );
  });

  it("does not replace a pod that a second policy selecting it sees Healthy: ReplacementBlocked reason Veto", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aService("web-live", bed.cluster.namespace));
    await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 2));
    const [victim] = await livePods(2);
    const victimName = victim!.metadata!.name!;
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { replacement: replacing() }));
    await bed.cluster.create(
      aPolicy("live", bed.cluster.namespace, {
        serviceName: "web-live",
        probe: { path: "/livez" },
        replacement: replacing(),
      }),
    );
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf("web"))?.healthy === 2 && (await statusOf("live"))?.healthy === 2, {
      timeoutMs: WAIT_MS,
      what: "both policies see both pods Healthy",
    });

    // The readiness path fails; the liveness path the second policy probes still answers 200.
    bed.farm.setPath(victim!.status.podIP, "/healthz", { status: 503, body: "unavailable" });
    await unhealthyInStatus(victimName, "web");
    bed.clock.advance(AFTER_MS);

    const blocked = await blockedCondition("Veto");
    expect(blocked.message).toContain(victimName);
    expect(blocked.message).toContain("policy shop/live sees the pod Healthy");
    expect(podEntry(await statusOf("live"), victimName)?.state).toBe("Healthy");
    expect(await bed.cluster.get("v1", "Pod", victimName)).toBeDefined();
    expect(evictions()).toHaveLength(0);
    expect((await statusOf("web"))?.replacements ?? []).toEqual([]);
  });

  it("never deletes a bare pod: ReplacementBlocked reason NoController", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    for (const name of ["web-a", "web-b"]) await bed.cluster.create(aPod(name, bed.cluster.namespace));
    for (const name of ["web-a", "web-b"]) await bed.farm.serve(await podIP(bed.cluster, name));
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { replacement: replacing() }));
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: WAIT_MS, what: "both pods Healthy" });

    bed.farm.failing(await podIP(bed.cluster, "web-a"));
    await unhealthyInStatus("web-a");
    bed.clock.advance(AFTER_MS);

    const blocked = await blockedCondition("NoController");
    expect(blocked.message).toContain("web-a: pod has no controller ownerReference");
    // Another window later it is still there, untouched.
    bed.clock.advance(AFTER_MS);
    await bed.cluster.patch({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-a", namespace: bed.cluster.namespace, annotations: { "example.com/nudge": "1" } },
    });
    const before = await reconcileCount();
    await waitFor(async () => (await reconcileCount()) > before, {
      timeoutMs: WAIT_MS,
      what: "a reconcile after the nudge",
    });
    expect(condition(await statusOf(), "ReplacementBlocked")?.reason).toBe("NoController");
    expect((await bed.cluster.get("v1", "Pod", "web-a"))?.metadata?.deletionTimestamp).toBeUndefined();
    expect(evictions()).toHaveLength(0);
    expect(podDeletes()).toHaveLength(0);
    expect((await statusOf())?.replacements ?? []).toEqual([]);
  });

  it("evicts a pod once: while it is terminating it is never evicted again", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 2));
    const [victim, survivor] = await livePods(2);
    const victimName = victim!.metadata!.name!;
    // A finalizer keeps the evicted pod terminating for as long as the test needs.
    await bed.cluster.patch({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: victimName, namespace: bed.cluster.namespace, finalizers: ["example.com/hold"] },
    });
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, { replacement: replacing({ maxPerHour: 10, maxPerDay: 10 }) }),
    );
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: WAIT_MS, what: "both pods Healthy" });

    bed.farm.failing(victim!.status.podIP);
    await unhealthyInStatus(victimName);
    bed.clock.advance(AFTER_MS);
    await waitFor(async () => (await bed.cluster.get("v1", "Pod", victimName))?.metadata?.deletionTimestamp, {
      timeoutMs: WAIT_MS,
      what: `${victimName} terminating`,
    });
    const [a, b] = await livePods(2);
    const fresh = [a!, b!].find((p) => p.metadata!.name !== survivor!.metadata!.name)!;
    bed.farm.healthy(fresh.status.podIP);
    await waitFor(async () => podEntry(await statusOf(), fresh.metadata!.name!)?.state === "Healthy", {
      timeoutMs: WAIT_MS,
      what: "the new pod Healthy",
    });

    // Windows and budget to spare, the pod still failing its probe, a pod event to wake the policy.
    for (let i = 1; i <= 2; i++) {
      bed.clock.advance(2 * AFTER_MS);
      const before = await reconcileCount();
      await bed.cluster.patch({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: victimName,
          namespace: bed.cluster.namespace,
          annotations: { "example.com/nudge": String(i) },
        },
      });
      await waitFor(async () => (await reconcileCount()) > before, {
        timeoutMs: WAIT_MS,
        what: "a reconcile after the nudge",
      });
    }
    expect((await bed.cluster.get("v1", "Pod", victimName))?.metadata?.deletionTimestamp).toBeDefined();
    expect(evictions(victimName)).toHaveLength(1);
    expect(evictions()).toHaveLength(1);
    expect((await statusOf())?.replacements).toHaveLength(1);

    await bed.cluster.patch({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: victimName, namespace: bed.cluster.namespace, finalizers: null },
    } as unknown as Obj);
  });
});
