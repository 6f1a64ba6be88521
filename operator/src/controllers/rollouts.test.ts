import { describe, expect, it } from "@jest/globals";
import type { HealthStateName } from "../domain/types.js";
import type { KubeObject, PodObject } from "./kube-objects.js";
import { Rollouts } from "./rollouts.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { NS, aPodObject } from "./testing/objects.js";

const DEPLOYMENT = { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "uid-deploy", controller: true };

function aReplicaSetObject(name: string, meta: Record<string, unknown> = {}): KubeObject {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      creationTimestamp: "2026-01-01T00:00:00Z",
      ownerReferences: [DEPLOYMENT],
      ...meta,
    },
  };
}

/** A pod of ReplicaSet `rs`, its template hash the part of the name after the dash. */
function podOf(rs: string, i: number): PodObject {
  const pod = aPodObject(`${rs}-${i}`, { labels: { app: "web", "pod-template-hash": rs.split("-")[1]! } });
  pod.metadata!.ownerReferences = [
    { apiVersion: "apps/v1", kind: "ReplicaSet", name: rs, uid: `uid-${rs}`, controller: true },
  ];
  return pod;
}

function suspectsOf(replicaSets: KubeObject[], states: Record<string, HealthStateName>, pods: PodObject[]) {
  const rollouts = new Rollouts({
    replicaSets: new MemoryCache(replicaSets),
    health: { get: (_policy, uid) => (states[uid] ? ({ state: states[uid] } as never) : undefined) },
  });
  return rollouts.suspects(`${NS}/web`, NS, pods);
}

const pods = [podOf("web-old", 0), podOf("web-new", 0), podOf("web-new", 1)];
const sick = { "uid-web-old-0": "Healthy", "uid-web-new-0": "Unhealthy", "uid-web-new-1": "Unhealthy" } as const;

describe("rollouts from the caches", () => {
  it("reads the revision annotation and the Deployment owner of each ReplicaSet, and the pods' controller ReplicaSet", () => {
    const sets = [
      aReplicaSetObject("web-old", { annotations: { "deployment.kubernetes.io/revision": "1" } }),
      aReplicaSetObject("web-new", { annotations: { "deployment.kubernetes.io/revision": "2" } }),
    ];
    const [s] = suspectsOf(sets, sick, pods);
    expect(s).toEqual({
      deployment: { name: "web", uid: "uid-deploy" },
      replicaSet: "web-new",
      revision: 2,
      pods: [
        { uid: "uid-web-new-0", name: "web-new-0" },
        { uid: "uid-web-new-1", name: "web-new-1" },
      ],
      older: [{ replicaSet: "web-old", healthy: 1 }],
    });
  });

  it("falls back to the creation time when a ReplicaSet has no revision", () => {
    const sets = [
      aReplicaSetObject("web-old", { creationTimestamp: "2026-01-01T00:00:00Z" }),
      aReplicaSetObject("web-new", { creationTimestamp: "2026-01-01T00:05:00Z" }),
    ];
    expect(suspectsOf(sets, sick, pods).map((s) => s.replicaSet)).toEqual(["web-new"]);
  });

  it.each([
    {
      name: "ReplicaSets not controlled by a Deployment",
      sets: [
        aReplicaSetObject("web-old", { ownerReferences: [] }),
        aReplicaSetObject("web-new", { ownerReferences: [] }),
      ],
      states: sick,
    },
    {
      name: "no pod Unhealthy (nothing is looked up)",
      sets: [aReplicaSetObject("web-old"), aReplicaSetObject("web-new")],
      states: { "uid-web-old-0": "Healthy", "uid-web-new-0": "Healthy" },
    },
    {
      name: "pods without a verdict (Unknown)",
      sets: [aReplicaSetObject("web-old"), aReplicaSetObject("web-new")],
      states: {},
    },
  ])("finds nothing for $name", ({ sets, states }) => {
    expect(suspectsOf(sets, states as Record<string, HealthStateName>, pods)).toEqual([]);
  });
});
