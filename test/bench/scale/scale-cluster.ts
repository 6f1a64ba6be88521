// What the scale benchmark needs of a cluster, whichever it is: the API test server in this
// process (testserver-cluster.ts) or the real control plane (real-cluster.ts). Each brings the
// pod server that answers for every pod address and its own way of seeing the operator's writes.
import type { KubeConfig } from "@kubernetes/client-node";
import type { PodView } from "../pods-running.js";
import type { PodServerProcess } from "./pod-server-process.js";
import { namespaceNames, namespaceOfPolicy, pod, policy, service, type ScaleShape } from "./scale-objects.js";

export type ClusterKind = "testserver" | "real";

/** One write request of the operator's, as either cluster records it. */
export interface OperatorWrite {
  time: string;
  verb: string;
  /** resource or resource/subresource, e.g. healthprobepolicies/status */
  resource: string;
  name: string;
  code: number;
  /** The writer's user: operator, or operator-<k> for replica k of several. */
  user?: string;
}

export interface PolicyStatus {
  name: string;
  namespace?: string;
  resourceVersion: string;
  status: Record<string, unknown> | undefined;
}

export interface ScaleCluster {
  readonly kind: ClusterKind;
  /** How the operator's writes are counted: the test server's request log, or kube-apiserver's audit log. */
  readonly writesFrom: "request log" | "audit log";
  readonly podServer: PodServerProcess;
  /** Creates the Services, the pods (until all run with an address and Ready) and the policies; ms the pods took to start. */
  createObjects(shape: ScaleShape, progress: (line: string) => void): Promise<number>;
  /** The benchmark's pods that run with an address and Ready (as of createObjects: nothing moves them after). */
  runningPods(): PodView[];
  /** `user` (default operator): replicas each write as a user of their own, so the request log tells them apart. */
  writeOperatorKubeconfig(path: string, user?: string): void;
  /** A client for the benchmark's own watches. */
  watchKubeConfig(): KubeConfig;
  /** Every write of the operator's so far, oldest first. */
  operatorWrites(): Promise<OperatorWrite[]>;
  policyStatuses(): Promise<PolicyStatus[]>;
  /** Namespace → holder of its shard handover marker (with --shards=on; the test server only). */
  shardMarkers?(): Map<string, string>;
  stop(): Promise<void>;
}

export interface ScaleClusterOptions {
  namespace: string;
  pods: number;
  /** Further namespaces to create beside `namespace` (the test server only). */
  namespaces?: string[];
}

/** Writes counted by resource. */
export function countWrites(writes: readonly OperatorWrite[]): { writes: number; byResource: Record<string, number> } {
  const byResource: Record<string, number> = {};
  for (const w of writes) byResource[w.resource] = (byResource[w.resource] ?? 0) + 1;
  return { writes: writes.length, byResource };
}

export const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/**
 * The benchmark's objects, in the same order and with the same clock on either cluster: the
 * Services, then the pods until `podsRunning` resolves (the ms they took is returned), then the
 * policies. `create` posts the bodies to a collection path.
 */
export async function createScaleObjects(
  shape: ScaleShape,
  create: (path: string, bodies: object[]) => Promise<void>,
  podsRunning: () => Promise<void>,
  progress: (line: string) => void,
  podsNote = "",
): Promise<number> {
  // Per namespace, in the order of the one-namespace layout: Services, pods, policies.
  const byNamespace = (make: (i: number) => object, n: number, namespaceOf: (i: number) => string) => {
    const out = new Map<string, object[]>(namespaceNames(shape).map((ns) => [ns, []]));
    for (const i of range(n)) out.get(namespaceOf(i))!.push(make(i));
    return out;
  };
  const ofPolicy = (i: number) => namespaceOfPolicy(shape, i);
  const ofPod = (i: number) => namespaceOfPolicy(shape, i % shape.policies);
  for (const [ns, bodies] of byNamespace((i) => service(shape, i), shape.policies, ofPolicy))
    await create(scalePaths(ns).services, bodies);
  progress(`creating ${shape.pods} pods${podsNote}`);
  const started = performance.now();
  for (const [ns, bodies] of byNamespace((i) => pod(shape, i), shape.pods, ofPod))
    await create(scalePaths(ns).pods, bodies);
  await podsRunning();
  const podsStartedMs = Math.round(performance.now() - started);
  progress(`pods running after ${podsStartedMs} ms`);
  for (const [ns, bodies] of byNamespace((i) => policy(shape, i), shape.policies, ofPolicy))
    await create(scalePaths(ns).policies, bodies);
  return podsStartedMs;
}

/** Where the benchmark's Services, pods and policies of a namespace are created. */
export function scalePaths(namespace: string): { services: string; pods: string; policies: string } {
  return {
    services: `/api/v1/namespaces/${namespace}/services`,
    pods: `/api/v1/namespaces/${namespace}/pods`,
    policies: `/apis/healthprobe.io/v1alpha1/namespaces/${namespace}/healthprobepolicies`,
  };
}
