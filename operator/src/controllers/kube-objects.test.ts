import { describe, expect, it } from "@jest/globals";
import {
  gateConditionOf,
  hasReadinessGate,
  isKubeletReady,
  isReadyBesidesGate,
  podIPsOf,
  slimNode,
  slimPod,
  slimReplicaSet,
  slimService,
  withoutManagedFields,
  type PodObject,
} from "./kube-objects.js";

const managedFields = [{ manager: "kubelet", operation: "Update", fieldsV1: { "f:status": {} } }];

function aFullPod(): PodObject & Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web-1",
      namespace: "shop",
      uid: "u1",
      resourceVersion: "42",
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { app: "web" },
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "rs1", controller: true }],
      managedFields,
    } as PodObject["metadata"],
    spec: {
      nodeName: "node-a",
      containers: [
        {
          name: "app",
          image: "web:1",
          env: [{ name: "A", value: "b" }],
          ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
        },
      ],
      volumes: [{ name: "token" }],
    } as unknown as PodObject["spec"],
    status: {
      phase: "Running",
      podIP: "10.0.0.1",
      podIPs: [{ ip: "10.0.0.1" }],
      startTime: "2026-01-01T00:00:01Z",
      conditions: [
        { type: "Initialized", status: "True", lastTransitionTime: "2026-01-01T00:00:01Z" },
        { type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:02Z" },
      ],
      containerStatuses: [{ name: "app", ready: true }],
    } as unknown as PodObject["status"],
  };
}

describe("cache transforms", () => {
  it("a slim pod keeps what the controllers read and drops the rest", () => {
    const slim = slimPod(aFullPod());
    expect(slim).toEqual({
      metadata: {
        name: "web-1",
        namespace: "shop",
        uid: "u1",
        resourceVersion: "42",
        creationTimestamp: "2026-01-01T00:00:00Z",
        labels: { app: "web" },
        ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "rs1", controller: true }],
      },
      spec: {
        nodeName: "node-a",
        containers: [{ name: "app", ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }] }],
      },
      status: {
        phase: "Running",
        podIP: "10.0.0.1",
        podIPs: [{ ip: "10.0.0.1" }],
        startTime: "2026-01-01T00:00:01Z",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:02Z" }],
      },
    });
  });

  it.each([
    ["Ready True", [{ type: "Ready", status: "True" }], true],
    ["Ready False", [{ type: "Ready", status: "False" }], false],
    ["no Ready condition", [{ type: "Initialized", status: "True" }], false],
  ])("a slim pod reads as kubelet Ready exactly as the full one does (%s)", (_name, conditions, ready) => {
    const full = aFullPod();
    full.status!.conditions = conditions;
    expect(isKubeletReady(slimPod(full))).toBe(ready);
    expect(isKubeletReady(full)).toBe(ready);
  });

  it("a slim gated pod keeps its gates, ContainersReady and the gate conditions, with reason and message for the operator's own", () => {
    const full = aFullPod();
    full.spec!.readinessGates = [{ conditionType: "healthprobe.io/ready" }, { conditionType: "lb.example/ready" }];
    full.status!.conditions = [
      { type: "ContainersReady", status: "True", reason: "x" },
      {
        type: "healthprobe.io/ready",
        status: "False",
        reason: "Unhealthy",
        message: "drained: …",
        lastTransitionTime: "2026-01-01T00:00:02Z",
      } as never,
      { type: "lb.example/ready", status: "True", reason: "y" },
      { type: "PodScheduled", status: "True" },
    ];
    const slim = slimPod(full);
    expect([slim.spec?.readinessGates, slim.status?.conditions]).toEqual([
      [{ conditionType: "healthprobe.io/ready" }, { conditionType: "lb.example/ready" }],
      [
        { type: "ContainersReady", status: "True" },
        { type: "healthprobe.io/ready", status: "False", reason: "Unhealthy", message: "drained: …" },
        { type: "lb.example/ready", status: "True" },
      ],
    ]);
    expect([hasReadinessGate(slim), gateConditionOf(slim)?.reason, isReadyBesidesGate(slim)]).toEqual([
      true,
      "Unhealthy",
      true,
    ]);
  });

  it.each([
    ["containers ready, no other gate", [], [{ type: "ContainersReady", status: "True" }], true],
    ["containers not ready", [], [{ type: "ContainersReady", status: "False" }], false],
    [
      "containers ready, another gate False",
      [{ conditionType: "lb.example/ready" }],
      [
        { type: "ContainersReady", status: "True" },
        { type: "lb.example/ready", status: "False" },
      ],
      false,
    ],
    [
      "containers ready, another gate without its condition",
      [{ conditionType: "lb.example/ready" }],
      [{ type: "ContainersReady", status: "True" }],
      false,
    ],
    [
      "containers ready, the operator's gate False",
      [{ conditionType: "healthprobe.io/ready" }],
      [
        { type: "ContainersReady", status: "True" },
        { type: "healthprobe.io/ready", status: "False" },
      ],
      true,
    ],
  ])("ready but for the gate: %s", (_name, gates, conditions, expected) => {
    const full = aFullPod();
    full.spec!.readinessGates = gates;
    full.status!.conditions = conditions;
    expect(isReadyBesidesGate(slimPod(full))).toBe(expected);
  });

  it("a slim pod terminating keeps its deletionTimestamp, and its addresses read the same", () => {
    const full = aFullPod();
    full.metadata!.deletionTimestamp = "2026-01-01T00:01:00Z";
    const slim = slimPod(full);
    expect(slim.metadata?.deletionTimestamp).toBe("2026-01-01T00:01:00Z");
    expect(podIPsOf(slim)).toEqual(podIPsOf(full));
  });

  it("a pod without spec or status stays without them", () => {
    expect(slimPod({ metadata: { name: "p", namespace: "n", uid: "u", resourceVersion: "1" } })).toEqual({
      metadata: { name: "p", namespace: "n", uid: "u", resourceVersion: "1" },
    });
  });

  it("a slim Service keeps its selector, ports and IP families", () => {
    const svc = {
      metadata: { name: "web", namespace: "shop", uid: "s1", resourceVersion: "7", managedFields } as never,
      spec: {
        selector: { app: "web" },
        ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
        ipFamilies: ["IPv4"],
        clusterIP: "10.96.0.1",
        sessionAffinity: "None",
      } as never,
    };
    expect(slimService(svc)).toEqual({
      metadata: { name: "web", namespace: "shop", uid: "s1", resourceVersion: "7" },
      spec: {
        selector: { app: "web" },
        ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
        ipFamilies: ["IPv4"],
      },
    });
  });

  it("a slim node keeps its name and labels only", () => {
    const node = {
      metadata: {
        name: "node-a",
        uid: "n1",
        resourceVersion: "9",
        labels: { "topology.kubernetes.io/zone": "z1" },
        managedFields,
      } as never,
      status: { conditions: [] },
    } as never;
    expect(slimNode(node)).toEqual({
      metadata: { name: "node-a", uid: "n1", resourceVersion: "9", labels: { "topology.kubernetes.io/zone": "z1" } },
    });
  });

  it("a slim ReplicaSet keeps its identity, owner Deployment, creation time and revision annotation only", () => {
    const owner = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "web",
      uid: "d1",
      controller: true,
      blockOwnerDeletion: true,
    };
    const rs = {
      metadata: {
        name: "web-5c8d",
        namespace: "shop",
        uid: "r1",
        resourceVersion: "11",
        creationTimestamp: "2026-11-30T10:00:00Z",
        generation: 3,
        labels: { app: "web", "pod-template-hash": "5c8d" },
        managedFields,
        ownerReferences: [owner],
        annotations: { "deployment.kubernetes.io/revision": "2", "deployment.kubernetes.io/desired-replicas": "3" },
      } as never,
      spec: { replicas: 3, template: {} } as never,
      status: { replicas: 3, readyReplicas: 1 } as never,
    } as never;
    expect(slimReplicaSet(rs)).toEqual({
      metadata: {
        name: "web-5c8d",
        namespace: "shop",
        uid: "r1",
        resourceVersion: "11",
        creationTimestamp: "2026-11-30T10:00:00Z",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "d1", controller: true }],
        annotations: { "deployment.kubernetes.io/revision": "2" },
      },
    });
  });

  it("withoutManagedFields drops managedFields only, and returns an object without them unchanged", () => {
    const slice = {
      metadata: { name: "web-abc", annotations: { a: "b" }, managedFields } as never,
      endpoints: [{ addresses: ["10.0.0.1"] }],
    };
    expect(withoutManagedFields(slice)).toEqual({
      metadata: { name: "web-abc", annotations: { a: "b" } },
      endpoints: [{ addresses: ["10.0.0.1"] }],
    });
    const plain = { metadata: { name: "x" } };
    expect(withoutManagedFields(plain)).toBe(plain);
  });
});
