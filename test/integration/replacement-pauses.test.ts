// Replacement pauses end to end: the mass-failure breaker (3 of 5 failing pauses every
// replacement, which resumes by itself when the share falls) and rollout awareness (a
// Deployment's newest ReplicaSet failing while the older one is Healthy is not replaced).
// The Deployment and its two ReplicaSets are created as a rollout leaves them (the Deployment
// paused, so kube-controller-manager's Deployment controller only adopts them, and the test server
// has none), and the ReplicaSet controller makes the pods.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, endpointReadiness, type Obj } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const AFTER_MS = 30_000;
/** Generous deadlines: the suite shares two cores with everything else. */
const WAIT_MS = 20_000;

const bed = useBed();

const statusOf = () => queries.policyStatus(bed.cluster, "web");
const condition = queries.conditionOf;
const nameOf = (p: Obj) => p.metadata!.name!;
const replacing = { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 10 };

async function conditionNow(type: string, status: string, reason: string): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const c = condition(await statusOf(), type);
      return c?.status === status && c.reason === reason ? c : undefined;
    },
    { timeoutMs: WAIT_MS, what: `${type}=${status} reason ${reason}` },
  );
}

async function unhealthyInStatus(names: readonly string[]): Promise<void> {
  await waitFor(
    async () => {
      const pods: Array<{ name: string; state: string; replaceAfter?: string }> = (await statusOf())?.pods ?? [];
      return (
        names.every((n) => pods.some((p) => p.name === n && p.state === "Unhealthy" && p.replaceAfter)) || undefined
      );
    },
    { timeoutMs: WAIT_MS, what: `${names.join(", ")} Unhealthy in status` },
  );
}

describe("the mass-failure breaker", () => {
  it("pauses replacement while 3 of 5 pods fail (MassFailure, with the share), and resumes by itself at 2 of 5", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 5));
    const pods = await queries.livePods(bed, 5, { timeoutMs: WAIT_MS });
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { replacement: replacing }));
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 5, { timeoutMs: WAIT_MS, what: "all five Healthy" });

    const sick = pods.slice(0, 3);
    for (const p of sick) bed.farm.failing(p.status.podIP);
    await unhealthyInStatus(sick.map(nameOf));
    bed.clock.advance(AFTER_MS);

    const paused = await conditionNow("ReplacementBlocked", "True", "MassFailure");
    const said =
      /^3 due replacements are waiting\. (.+): 3 of 5 targets \(60%\) are Unhealthy, above pauseAboveUnhealthyPercent=50: paused until the share falls$/.exec(
        paused.message,
      );
    expect(said?.[1]?.split(", ").sort()).toEqual(sick.map(nameOf).sort());
    expect(queries.evictionsOf(bed.cluster)).toHaveLength(0);
    // The windows keep running: every sick pod still shows when its window ended.
    const st = await statusOf();
    for (const p of sick)
      expect(st?.pods.find((e: { name: string }) => e.name === nameOf(p))?.replaceAfter).toEqual(expect.any(String));

    // One recovers: 2 of 5 is not above 50, and the two still failing are replaced at once.
    bed.farm.healthy(sick[0]!.status.podIP);
    const evicted = await waitFor(
      () => {
        const e = queries.evictionsOf(bed.cluster).filter((x) => x.code < 300);
        return e.length >= 2 ? e : undefined;
      },
      { timeoutMs: WAIT_MS, what: "the two still failing pods evicted" },
    );
    expect(evicted.map((e) => e.name).sort()).toEqual(sick.slice(1).map(nameOf).sort());
  });
});

describe("rollout awareness", () => {
  /** The ReplicaSet of one template revision, 2 pods, not yet owned (its Deployment adopts it). */
  async function replicaSet(name: string, hash: string, revision: string, image: string): Promise<Obj> {
    const labels = { app: "web", "pod-template-hash": hash };
    const rs = aReplicaSet(name, bed.cluster.namespace, 2, labels);
    // Labelled like its pods, as the Deployment controller labels its ReplicaSets: it claims (and
    // keeps) only ReplicaSets whose own labels match its selector.
    rs.metadata = { ...rs.metadata, labels, annotations: { "deployment.kubernetes.io/revision": revision } };
    rs.spec.template.spec.containers[0].image = image;
    return bed.cluster.create(rs);
  }

  /** The Deployment as a rollout leaves it: paused, its template the newest ReplicaSet's, both ReplicaSets its own. */
  async function deploymentOwning(newest: Obj, older: Obj): Promise<Obj> {
    const template = structuredClone(newest.spec.template);
    delete template.metadata.labels["pod-template-hash"];
    const deployment = await bed.cluster.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: {
        replicas: 4,
        paused: true,
        selector: { matchLabels: { app: "web" } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        template,
      },
    });
    // kube-controller-manager's Deployment controller adopts them itself; the test server has none,
    // so the test writes the same controller reference (the same write either way).
    const owner = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: nameOf(deployment),
      uid: deployment.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    for (const rs of [older, newest])
      await bed.cluster.patch({
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: nameOf(rs), namespace: bed.cluster.namespace, ownerReferences: [owner] },
      });
    return deployment;
  }

  it("a Deployment's newest ReplicaSet failing while the older one is Healthy: RolloutSuspect, Warnings, drained within the cap, never evicted", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    // Made as a rollout leaves them: the older ReplicaSet, the newer one, then the Deployment owning both.
    const older = await replicaSet("web-7d9f", "7d9f", "1", "registry.example/web:1");
    const newest = await replicaSet("web-5c8d", "5c8d", "2", "registry.example/web:2");
    const deployment = await deploymentOwning(newest, older);
    const pods = await queries.livePods(bed, 4, { timeoutMs: WAIT_MS });
    const fresh = pods.filter((p) => p.metadata!.labels!["pod-template-hash"] === "5c8d");
    expect(fresh).toHaveLength(2);
    // The new template fails from its first probe on.
    for (const p of fresh) bed.farm.failing(p.status.podIP);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { replacement: replacing }));
    await bed.startOperator([], { clock: bed.clock });
    await unhealthyInStatus(fresh.map(nameOf));

    // Once every pod has its first verdict (the condition may turn True while an old pod is still Unknown).
    const full =
      "ReplicaSet web-5c8d (revision 2) of Deployment web: 2 pods Unhealthy, none Healthy, while 2 pods of older ReplicaSet web-7d9f are Healthy; its Unhealthy pods are not replaced";
    await waitFor(async () => condition(await statusOf(), "RolloutSuspect")?.message === full || undefined, {
      timeoutMs: WAIT_MS,
      what: `RolloutSuspect saying "${full}"`,
    });
    expect(condition(await statusOf(), "RolloutSuspect")).toMatchObject({
      status: "True",
      reason: "NewReplicaSetUnhealthy",
    });
    bed.clock.advance(AFTER_MS);
    const blocked = await conditionNow("ReplacementBlocked", "True", "Rollout");
    expect(blocked.message).toContain(
      "suspect rollout: ReplicaSet web-5c8d (revision 2) of Deployment web is the newest",
    );
    // Draining still applies, within the cap (2 of 4).
    await waitFor(
      async () => {
        const ready = await endpointReadiness(bed.cluster, "web");
        return fresh.every((p) => ready.get(nameOf(p)) === false) || undefined;
      },
      { timeoutMs: WAIT_MS, what: "the new pods drained" },
    );

    const warnings = await waitFor(
      async () => {
        const events = (await bed.cluster.list("events.k8s.io/v1", "Event", bed.cluster.namespace)).filter(
          (e) => e.reason === "RolloutSuspect",
        );
        return events.length >= 2 ? events : undefined;
      },
      { timeoutMs: WAIT_MS, what: "RolloutSuspect Events" },
    );
    expect(warnings.map((e) => `${e.type} ${e.regarding.kind}/${e.regarding.name}`).sort()).toEqual([
      "Warning Deployment/web",
      "Warning HealthProbePolicy/web",
    ]);
    expect(warnings.find((e) => e.regarding.kind === "Deployment")!.regarding.uid).toBe(deployment.metadata!.uid);
    // Announced once, when the suspicion began (one or both new pods Unhealthy by then).
    expect(warnings[0]!.note).toMatch(
      /^ReplicaSet web-5c8d \(revision 2\) of Deployment web looks like a failing rollout: policy .*\/web sees [12] of its pods Unhealthy and none Healthy/,
    );

    // Another window later: still nothing evicted.
    bed.clock.advance(AFTER_MS);
    await conditionNow("ReplacementBlocked", "True", "Rollout");
    expect(queries.evictionsOf(bed.cluster)).toHaveLength(0);
    for (const p of fresh)
      expect((await bed.cluster.get("v1", "Pod", nameOf(p)))?.metadata?.deletionTimestamp).toBeUndefined();
  });
});
