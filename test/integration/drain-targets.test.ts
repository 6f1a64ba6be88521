// Which pods the slices list and when an endpoint may be ready: dryRun leaves kubelet's word
// alone, pods that leave the selector leave the slices, and kubelet readiness always gates.
import { describe, expect, it } from "@jest/globals";
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { waitFor } from "../support/wait-for.js";
import { endpointReadiness, kubeConfigFor, type Obj } from "./support/cluster.js";
import { givenPolicyOver, itOnTestServer, useBed } from "./support/test-bed.js";
import { podEntry, type PolicyCondition as Condition, type StatusPod } from "./support/queries.js";

const bed = useBed();

const readiness = () => endpointReadiness(bed.cluster, "web");
const policyStatus = async () =>
  (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status as
    Record<string, any> | undefined;
const condition = (st: Record<string, any> | undefined, type: string) =>
  (st?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
const readyNames = (r: Map<string, boolean>) =>
  [...r.entries()]
    .filter(([, ready]) => ready)
    .map(([n]) => n)
    .sort();
const sliceWrites = () =>
  bed.cluster.server.requestLog.filter(
    (e) => e.user === "operator" && e.resource === "endpointslices" && e.method !== "GET",
  );

async function waitForStatus(
  what: string,
  predicate: (st: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const st = await policyStatus();
      return st && predicate(st) ? st : undefined;
    },
    { what },
  );
}

async function allHealthyAndReady(n: number): Promise<void> {
  await waitFor(
    async () => {
      const r = await readiness();
      return (await policyStatus())?.healthy === n && r.size === n && [...r.values()].every(Boolean);
    },
    { what: `all ${n} pods Healthy and ready` },
  );
}

async function probesServed(ip: string, more: number): Promise<void> {
  const start = await bed.farm.hitsOf(ip);
  await waitFor(async () => (await bed.farm.hitsOf(ip)) >= start + more, { what: `${more} more probes of ${ip}` });
}

/** What the kubelet would do when a readiness probe fails: Ready=False through pods/status. */
async function kubeletMarksUnready(name: string): Promise<void> {
  const core = kubeConfigFor(bed.cluster.server).makeApiClient(CoreV1Api);
  const pod: V1Pod = await core.readNamespacedPod({ name, namespace: bed.cluster.namespace });
  pod.status!.conditions = (pod.status?.conditions ?? []).map((c) =>
    c.type === "Ready" || c.type === "ContainersReady" ? { ...c, status: "False", reason: "ContainersNotReady" } : c,
  );
  await core.replaceNamespacedPodStatus({ name, namespace: bed.cluster.namespace, body: pod });
}

describe("dryRun", () => {
  // Test server only: it sets a pod's Ready condition itself, which the control plane's kubelet stand-in writes back.
  itOnTestServer(
    "keeps the slices at kubelet readiness while status and Events say what would have been drained",
    async () => {
      const ips = await givenPolicyOver(bed, ["web-a", "web-b", "web-c", "web-d"], {
        dryRun: true,
        maxUnhealthyPercent: 50,
      });
      await allHealthyAndReady(4);

      for (const name of ["web-a", "web-b", "web-c"]) {
        bed.farm.failing(ips.get(name)!);
        await waitForStatus(`${name} Unhealthy`, (st) => podEntry(st, name)?.state === "Unhealthy");
      }
      await kubeletMarksUnready("web-d");

      const st = await waitForStatus(
        "the dryRun verdicts",
        (s) => s.unhealthy === 3 && condition(s, "DrainCapped")?.status === "True",
      );
      expect(st.drained).toBe(0);
      expect(podEntry(st, "web-a")).toMatchObject({
        drained: false,
        reason: "kept: dryRun (would be drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50)",
      });
      expect(podEntry(st, "web-b")).toMatchObject({
        drained: false,
        reason: "kept: dryRun (would be drained: longest unhealthy, 2 of 2 allowed by maxUnhealthyPercent=50)",
      });
      expect(podEntry(st, "web-c")!.reason).toMatch(/^kept: dryRun \(would be kept: over the cap/);
      expect(condition(st, "DrainCapped")!.message).toMatch(/dryRun: nothing is drained/);
      expect(condition(st, "Degraded")).toMatchObject({ status: "True", reason: "UnhealthyTargets" });

      // Kubelet's word only: the failing pods stay ready, the kubelet-unready one is not.
      const r = await waitFor(
        async () => {
          const x = await readiness();
          return x.get("web-d") === false ? x : undefined;
        },
        { what: "web-d not ready as kubelet says" },
      );
      expect(readyNames(r)).toEqual(["web-a", "web-b", "web-c"]);

      const capped = await waitFor(
        async () => (await bed.cluster.list("events.k8s.io/v1", "Event")).find((e: Obj) => e.reason === "DrainCapped"),
        { what: "a DrainCapped Event" },
      );
      expect(capped.note).toMatch(/dryRun: nothing is drained/);
      // Drained Events say what would have been done, never that it was.
      const wouldDrain = await waitFor(
        async () => {
          const drained = (await bed.cluster.list("events.k8s.io/v1", "Event")).filter(
            (e: Obj) => e.reason === "Drained",
          );
          return drained.length > 0 ? drained : undefined;
        },
        { what: "a dryRun Drained Event" },
      );
      for (const e of wouldDrain) expect(e.note).toMatch(/^dryRun: pod web-[abc] would be drained from the Service/);
      // Nothing is evicted and no endpoint was ever turned not-ready for health: one write for web-d.
      expect(
        bed.cluster.server.requestLog.some(
          (e) =>
            e.user === "operator" && (e.subresource === "eviction" || (e.resource === "pods" && e.method === "DELETE")),
        ),
      ).toBe(false);
      expect(sliceWrites().map((e) => e.verb)).toEqual(["create", "update"]);
    },
  );
});

describe("targets", () => {
  it("removes a deleted pod and a pod relabelled out of the selector from the slices, and stops probing it", async () => {
    const ips = await givenPolicyOver(bed, ["web-a", "web-b", "web-c"]);
    await allHealthyAndReady(3);

    await bed.cluster.remove("v1", "Pod", "web-a");
    await waitFor(async () => !(await readiness()).has("web-a"), { what: "web-a gone from the slices" });

    await bed.cluster.patch({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-b", namespace: bed.cluster.namespace, labels: { app: "other" } },
    });
    const r = await waitFor(
      async () => {
        const x = await readiness();
        return x.has("web-b") ? undefined : x;
      },
      { what: "web-b gone from the slices" },
    );
    expect([...r.entries()]).toEqual([["web-c", true]]);
    const st = await waitForStatus("one target left", (s) => s.targets === 1);
    expect((st.pods as StatusPod[]).map((p) => p.name)).toEqual(["web-c"]);

    // While web-c answers three more probes, web-b is asked at most once more (one in flight).
    const bHits = await bed.farm.hitsOf(ips.get("web-b")!);
    await probesServed(ips.get("web-c")!, 3);
    expect((await bed.farm.hitsOf(ips.get("web-b")!)) - bHits).toBeLessThanOrEqual(1);
  });

  // Test server only: it sets a pod's Ready condition itself, which the control plane's kubelet stand-in writes back.
  itOnTestServer("never makes a kubelet-unready pod ready, however healthy its probe", async () => {
    const ips = await givenPolicyOver(bed, ["web-a", "web-b"]);
    await allHealthyAndReady(2);

    await kubeletMarksUnready("web-a");
    await waitFor(async () => (await readiness()).get("web-a") === false, { what: "web-a not ready" });
    for (let i = 0; i < 3; i++) {
      await probesServed(ips.get("web-a")!, 1);
      expect((await readiness()).get("web-a")).toBe(false);
    }
    const st = await waitForStatus(
      "web-a reported as kubelet-unready",
      (s) => podEntry(s, "web-a")?.reason === "admitted: healthy (kubelet: not ready)",
    );
    expect(podEntry(st, "web-a")).toMatchObject({ state: "Healthy", drained: false });
    expect((await readiness()).get("web-b")).toBe(true);
  });
});
