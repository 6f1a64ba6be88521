// The shadow report end to end: a pod the kubelet calls NotReady while the operator's probe finds
// it Healthy (a trial run with dryRun), reported per pod in status, in the DisagreesWithKubelet
// condition and in the gauge, once it has lasted one probe period, and cleared when they agree.
import { describe, expect, it } from "@jest/globals";
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, kubeConfigFor } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { itOnTestServer, useBed } from "./support/test-bed.js";

const PERIOD_S = 2;
const bed = useBed();

/** What the kubelet writes when a readiness probe changes: Ready (and ContainersReady) with a new transition time. */
async function kubeletSetsReady(name: string, ready: boolean): Promise<number> {
  const core = kubeConfigFor(bed.cluster.server).makeApiClient(CoreV1Api);
  const pod: V1Pod = await core.readNamespacedPod({ name, namespace: bed.cluster.namespace });
  const at = new Date(Math.floor(Date.now() / 1000) * 1000);
  pod.status!.conditions = (pod.status?.conditions ?? []).map((c) =>
    c.type === "Ready" || c.type === "ContainersReady"
      ? { ...c, status: ready ? "True" : "False", reason: ready ? "" : "ContainersNotReady", lastTransitionTime: at }
      : c,
  );
  await core.replaceNamespacedPodStatus({ name, namespace: bed.cluster.namespace, body: pod });
  return at.getTime();
}

async function gauge(kind: string): Promise<number | undefined> {
  const metric = await bed.operator.metrics.registry.getSingleMetric("healthprobe_kubelet_disagreements")?.get();
  return metric?.values.find((v) => v.labels.policy === `${bed.cluster.namespace}/web` && v.labels.kind === kind)
    ?.value;
}

const podEntry = queries.podEntry;

describe("the shadow report", () => {
  // Test server only: it sets a pod's Ready condition itself, which the control plane's kubelet stand-in writes back.
  itOnTestServer(
    "reports a pod Healthy by probe but kubelet-NotReady after one period, in status, condition and gauge, and clears it when they agree",
    async () => {
      await bed.cluster.create(aService("web", bed.cluster.namespace));
      await queries.servedPods(bed, ["web-a", "web-b"]);
      await bed.cluster.create(
        aPolicy("web", bed.cluster.namespace, { dryRun: true, periodSeconds: PERIOD_S, timeoutSeconds: 1 }),
      );
      await bed.startOperator();
      await waitFor(async () => (await queries.policyStatus(bed.cluster))?.healthy === 2, {
        what: "both pods Healthy",
      });
      expect(queries.conditionOf(await queries.policyStatus(bed.cluster), "DisagreesWithKubelet")).toMatchObject({
        status: "False",
        reason: "AgreesWithKubelet",
      });

      const notReadyAt = await kubeletSetsReady("web-a", false);
      const reported = await waitFor(
        async () => {
          const st = await queries.policyStatus(bed.cluster);
          return podEntry(st, "web-a")?.disagreesWithKubelet ? st : undefined;
        },
        { what: "web-a's disagreement in status" },
      );
      // Reported only once it has lasted a period: the status write came after since + period.
      const written = Date.parse(queries.conditionOf(reported, "DisagreesWithKubelet")!.lastTransitionTime);
      expect(podEntry(reported, "web-a")!.disagreesWithKubelet).toEqual({
        since: new Date(notReadyAt).toISOString().replace(".000Z", "Z"),
        kind: "ProbeHealthyKubeletNotReady",
      });
      expect(written).toBeGreaterThanOrEqual(notReadyAt + PERIOD_S * 1000 - 1000);
      expect(podEntry(reported, "web-a")!.state).toBe("Healthy");
      expect(podEntry(reported, "web-b")!.disagreesWithKubelet).toBeUndefined();
      expect(queries.conditionOf(reported, "DisagreesWithKubelet")).toMatchObject({
        status: "True",
        reason: "ProbeHealthyKubeletNotReady",
        message:
          "1 target disagrees with kubelet readiness for longer than one period: 1 Healthy by probe but kubelet-NotReady (web-a)",
      });
      await waitFor(async () => (await gauge("ProbeHealthyKubeletNotReady")) === 1, { what: "the gauge at 1" });
      expect(await gauge("ProbeUnhealthyKubeletReady")).toBe(0);

      await kubeletSetsReady("web-a", true);
      const cleared = await waitFor(
        async () => {
          const st = await queries.policyStatus(bed.cluster);
          return podEntry(st, "web-a") && !podEntry(st, "web-a")!.disagreesWithKubelet ? st : undefined;
        },
        { what: "web-a's disagreement cleared" },
      );
      expect(queries.conditionOf(cleared, "DisagreesWithKubelet")?.status).toBe("False");
      await waitFor(async () => (await gauge("ProbeHealthyKubeletNotReady")) === 0, { what: "the gauge back at 0" });
    },
    60_000,
  );

  it("reports a pod Unhealthy by probe but kubelet-Ready", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await queries.servedPods(bed, ["web-a", "web-b"]);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, { dryRun: true, periodSeconds: 1, timeoutSeconds: 1 }),
    );
    await bed.startOperator();
    await waitFor(async () => (await queries.policyStatus(bed.cluster))?.healthy === 2, { what: "both pods Healthy" });

    bed.farm.failing(ips.get("web-b")!);
    const st = await waitFor(
      async () => {
        const s = await queries.policyStatus(bed.cluster);
        return podEntry(s, "web-b")?.disagreesWithKubelet ? s : undefined;
      },
      { what: "web-b's disagreement in status" },
    );
    expect(podEntry(st, "web-b")).toMatchObject({
      state: "Unhealthy",
      disagreesWithKubelet: { kind: "ProbeUnhealthyKubeletReady" },
    });
    // It began when the verdict changed (the pod was kubelet-Ready all along).
    expect(podEntry(st, "web-b")!.disagreesWithKubelet!.since).toBe(podEntry(st, "web-b")!.since);
    expect(queries.conditionOf(st, "DisagreesWithKubelet")?.reason).toBe("ProbeUnhealthyKubeletReady");
    await waitFor(async () => (await gauge("ProbeUnhealthyKubeletReady")) === 1, { what: "the gauge at 1" });
  }, 60_000);
});
