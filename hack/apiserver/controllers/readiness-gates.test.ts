// The kubelet stand-in's Ready rule with readiness gates: Ready only while ContainersReady and every
// gate's condition are True, written again when another writer patches a gate through pods/status.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import type { V1Pod, V1PodCondition } from "@kubernetes/client-node";
import { waitFor } from "../../../test/support/wait-for.js";
import { aPod, freshNamespace, startHarness, type Harness } from "./harness.js";

const GATE = "example.com/lb";
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ replicaSet: false, podDisruptionBudget: false });
});
afterAll(async () => {
  await h?.stop();
});

function aGatedPod(name: string, gates = [GATE]): V1Pod {
  const pod = aPod({ name });
  pod.spec!.readinessGates = gates.map((conditionType) => ({ conditionType }));
  return pod;
}

const conditionOf = (pod: V1Pod, type: string): V1PodCondition | undefined =>
  pod.status?.conditions?.find((c) => c.type === type);

async function readyBecomes(ns: string, name: string, status: "True" | "False", what: string): Promise<V1Pod> {
  return waitFor(
    async () => {
      const pod = await h.core.readNamespacedPod({ name, namespace: ns });
      return pod.status?.podIP && conditionOf(pod, "Ready")?.status === status ? pod : undefined;
    },
    { what },
  );
}

type PatchKind = "strategic" | "merge" | "json";
const CONTENT_TYPES: Record<PatchKind, string> = {
  strategic: "application/strategic-merge-patch+json",
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
};

/** Sets the gate's condition as a controller would, through the pods/status subresource. */
async function setGate(ns: string, name: string, status: "True" | "False", kind: PatchKind): Promise<number> {
  const condition = {
    type: GATE,
    status,
    reason: status === "True" ? "Admitted" : "KeptOut",
    lastTransitionTime: new Date().toISOString(),
  };
  let body: unknown;
  if (kind === "strategic") body = { status: { conditions: [condition] } };
  else {
    const pod = await h.core.readNamespacedPod({ name, namespace: ns });
    const others = (pod.status?.conditions ?? []).filter((c) => c.type !== GATE);
    // A merge patch replaces the whole list; the JSON patch tests the resourceVersion first.
    body =
      kind === "merge"
        ? {
            metadata: { resourceVersion: pod.metadata!.resourceVersion },
            status: { conditions: [...others, condition] },
          }
        : [
            { op: "test", path: "/metadata/resourceVersion", value: pod.metadata!.resourceVersion },
            { op: "replace", path: "/status/conditions", value: [...others, condition] },
          ];
  }
  const res = await fetch(`${h.server.url}/api/v1/namespaces/${ns}/pods/${name}/status`, {
    method: "PATCH",
    headers: { authorization: "Bearer gate-controller", "content-type": CONTENT_TYPES[kind] },
    body: JSON.stringify(body),
  });
  await res.text();
  return res.status;
}

describe("kubelet stand-in with readiness gates", () => {
  it("starts a gated pod not Ready, with the kubelet's reason and message, while its containers are ready", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aGatedPod("gated", [GATE, "example.com/other"]) });
    const pod = await readyBecomes(ns, "gated", "False", "the gated pod to start");
    expect(conditionOf(pod, "ContainersReady")?.status).toBe("True");
    expect(conditionOf(pod, "Ready")).toMatchObject({
      reason: "ReadinessGatesNotReady",
      message: `corresponding condition of pod readiness gate "${GATE}" does not exist., corresponding condition of pod readiness gate "example.com/other" does not exist.`,
    });
  });

  it.each<PatchKind>(["strategic", "merge", "json"])(
    "follows a gate patched True, then False, through pods/status (%s patch)",
    async (kind) => {
      const ns = await freshNamespace(h);
      await h.core.createNamespacedPod({ namespace: ns, body: aGatedPod("web") });
      await readyBecomes(ns, "web", "False", "the gated pod to start");

      expect(await setGate(ns, "web", "True", kind)).toBe(200);
      const admitted = await readyBecomes(ns, "web", "True", "Ready once the gate is True");
      expect(conditionOf(admitted, "Ready")?.reason).toBeUndefined();
      expect(conditionOf(admitted, GATE)).toMatchObject({ status: "True", reason: "Admitted" });

      expect(await setGate(ns, "web", "False", kind)).toBe(200);
      const keptOut = await readyBecomes(ns, "web", "False", "not Ready once the gate is False");
      expect(conditionOf(keptOut, "Ready")).toMatchObject({
        reason: "ReadinessGatesNotReady",
        message: `the status of pod readiness gate "${GATE}" is not "True", but False`,
      });
      // The condition the kubelet does not own is kept as its writer left it.
      expect(conditionOf(keptOut, GATE)).toMatchObject({ status: "False", reason: "KeptOut" });
      expect(conditionOf(keptOut, "ContainersReady")?.status).toBe("True");
    },
  );

  it("keeps a gated pod not Ready while its containers are not ready, whatever the gate says", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aGatedPod("probe") });
    await readyBecomes(ns, "probe", "False", "the gated pod to start");
    expect(await setGate(ns, "probe", "True", "strategic")).toBe(200);
    await readyBecomes(ns, "probe", "True", "Ready once the gate is True");

    // A failing readiness probe: the kubelet's ContainersReady turns False.
    const failing = {
      type: "ContainersReady",
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [app]",
    };
    await fetch(`${h.server.url}/api/v1/namespaces/${ns}/pods/probe/status`, {
      method: "PATCH",
      headers: { authorization: "Bearer admin", "content-type": CONTENT_TYPES.strategic },
      body: JSON.stringify({ status: { conditions: [failing] } }),
    }).then((r) => r.text());
    const pod = await readyBecomes(ns, "probe", "False", "not Ready while the containers are not");
    expect(conditionOf(pod, "Ready")).toMatchObject({
      reason: "ContainersNotReady",
      message: "containers with unready status: [app]",
    });
    expect(conditionOf(pod, GATE)?.status).toBe("True");
  });

  it("leaves Ready alone on a pod without readiness gates", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "plain" }) });
    await readyBecomes(ns, "plain", "True", "the plain pod to start");
    const notReady = { type: "Ready", status: "False", reason: "Testing" };
    await fetch(`${h.server.url}/api/v1/namespaces/${ns}/pods/plain/status`, {
      method: "PATCH",
      headers: { authorization: "Bearer admin", "content-type": CONTENT_TYPES.strategic },
      body: JSON.stringify({ status: { conditions: [notReady] } }),
    }).then((r) => r.text());
    // A later write by someone else is the proof that the stand-in's own work is done.
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "later" }) });
    await readyBecomes(ns, "later", "True", "a later pod to start");
    const writes = h.server.requestLog.filter(
      (e) => e.namespace === ns && e.name === "plain" && e.subresource === "status" && e.user === "controller-manager",
    );
    expect(writes).toHaveLength(1);
    expect(conditionOf(await h.core.readNamespacedPod({ name: "plain", namespace: ns }), "Ready")?.status).toBe(
      "False",
    );
  });
});
