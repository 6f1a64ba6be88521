// Small controllers the tests need (ReplicaSet, PodDisruptionBudget status, EndpointSlices of
// Services with a selector, a kubelet stand-in).
// They watch the server's store in process (informers.ts) and write to it like real controllers:
// informers feed work queues, each sync is level-based and idempotent.
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PolicyV1Api,
  type V1Pod,
  type V1PodDisruptionBudget,
  type V1ReplicaSet,
} from "@kubernetes/client-node";
import { DisruptionController } from "./disruption-controller.js";
import { startEndpointSlices, type RunningEndpointSlices } from "./endpoint-slices.js";
import { startInformer, type RunningInformer, type StoreSource } from "./informers.js";
import { KubeletStandIn } from "./kubelet-stand-in.js";
import { podKey } from "./pods.js";
import { podRequests } from "./pod-requests.js";
import { rawJsonClient } from "./raw-json-client.js";
import type { RequestHandler } from "../loopback.js";
import { ReplicaSetController } from "./replica-set-controller.js";
import { WorkQueue } from "./work-queue.js";

export interface ControllerOptions {
  /** Kubeconfig YAML (user "controller-manager") for the server. */
  kubeconfig: string;
  /** The server's store, which the controllers watch. */
  store: StoreSource;
  simulateKubelet: boolean;
  /** CIDR from which the kubelet stand-in hands out pod IPs, default 127.0.10.0/24. */
  podCidr: string;
  /** How long the kubelet stand-in takes to stop a terminating pod's containers, default 0. */
  terminationDelayMs?: number;
  replicaSet: boolean;
  podDisruptionBudget: boolean;
  /** The built-in EndpointSlice controller for Services with a selector; default false. */
  endpointSlice?: boolean;
  /** Clock for readiness ages, availability and disruptedPods expiry; default Date.now. */
  now?: () => number;
  /**
   * The server's own request handler, when the controllers run inside the server: their pod and
   * status writes go to it in process rather than over a socket (see raw-json-client.ts).
   */
  handler?: RequestHandler;
  /** Called with each sync or informer error (they are retried); default: kept in `errors`. */
  onError?: (err: Error) => void;
}

export interface RunningControllers {
  stop(): Promise<void>;
  /** The most recent errors (at most 50), oldest first. */
  readonly errors: readonly Error[];
}

export const DEFAULT_POD_CIDR = "127.0.10.0/24";

export async function startControllers(opts: ControllerOptions): Promise<RunningControllers> {
  const kc = new KubeConfig();
  kc.loadFromString(opts.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const now = opts.now ?? Date.now;
  const errors: Error[] = [];
  const report = (err: unknown): void => {
    const e = err instanceof Error ? err : new Error(String(err));
    errors.push(e);
    if (errors.length > 50) errors.shift();
    opts.onError?.(e);
  };

  const queues: WorkQueue[] = [];
  const informers: Array<RunningInformer<any>> = [];
  const raw = rawJsonClient(kc, opts.handler ? { handler: opts.handler } : {});
  const podApi = podRequests(raw);
  const stopAll = async (): Promise<void> => {
    informers.forEach((i) => i.stop());
    await Promise.all(queues.map((q) => q.shutDown()));
    await raw.close();
  };

  try {
    // Caches exist before the controllers that read them; events flow once informers start.
    let podsCache: { get(n: string, ns?: string): V1Pod | undefined; list(ns?: string): ReadonlyArray<V1Pod> } = {
      get: () => undefined,
      list: () => [],
    };
    let rsCache: {
      get(n: string, ns?: string): V1ReplicaSet | undefined;
      list(ns?: string): ReadonlyArray<V1ReplicaSet>;
    } = { get: () => undefined, list: () => [] };
    let pdbCache: {
      get(n: string, ns?: string): V1PodDisruptionBudget | undefined;
      list(ns?: string): ReadonlyArray<V1PodDisruptionBudget>;
    } = { get: () => undefined, list: () => [] };
    const pods = { get: (n: string, ns?: string) => podsCache.get(n, ns), list: (ns?: string) => podsCache.list(ns) };
    const replicaSets = {
      get: (n: string, ns?: string) => rsCache.get(n, ns),
      list: (ns?: string) => rsCache.list(ns),
    };
    const budgets = { get: (n: string, ns?: string) => pdbCache.get(n, ns), list: (ns?: string) => pdbCache.list(ns) };

    let rsQueue: WorkQueue | undefined;
    let rsController: ReplicaSetController | undefined;
    if (opts.replicaSet) {
      const putStatus = async (namespace: string, name: string, rs: V1ReplicaSet): Promise<V1ReplicaSet> =>
        JSON.parse(
          await raw.request(
            "PUT",
            `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/replicasets/${encodeURIComponent(name)}/status`,
            rs,
          ),
        ) as V1ReplicaSet;
      rsController = new ReplicaSetController({
        core,
        podApi,
        putStatus,
        apps,
        pods,
        replicaSets,
        now,
        enqueue: (k) => rsQueue!.add(k),
      });
      const c = rsController;
      rsQueue = new WorkQueue(
        "replicaset",
        (k) => c.sync(k),
        (_k, e) => report(e),
      );
      queues.push(rsQueue);
    }
    let pdbQueue: WorkQueue | undefined;
    let pdbController: DisruptionController | undefined;
    if (opts.podDisruptionBudget) {
      pdbController = new DisruptionController({
        policy,
        pods,
        budgets,
        replicaSets: opts.replicaSet ? replicaSets : undefined,
        now,
        enqueue: (k) => pdbQueue!.add(k),
      });
      const c = pdbController;
      pdbQueue = new WorkQueue(
        "disruption",
        (k) => c.sync(k),
        (_k, e) => report(e),
      );
      queues.push(pdbQueue);
    }
    let kubeletQueue: WorkQueue | undefined;
    let kubelet: KubeletStandIn | undefined;
    if (opts.simulateKubelet) {
      kubelet = new KubeletStandIn({
        podApi,
        pods,
        podCidr: opts.podCidr || DEFAULT_POD_CIDR,
        terminationDelayMs: opts.terminationDelayMs ?? 0,
        now,
        enqueue: (k) => kubeletQueue!.add(k),
      });
      const k = kubelet;
      kubeletQueue = new WorkQueue(
        "kubelet",
        (key) => k.sync(key),
        (_key, e) => report(e),
      );
      queues.push(kubeletQueue);
    }

    if (opts.replicaSet) {
      const running = startInformer<V1ReplicaSet>(
        opts.store,
        { group: "apps", version: "v1", resource: "replicasets" },
        report,
        (inf) => {
          inf.on("add", (rs) => {
            rsQueue!.add(podKey(rs));
            pdbController?.controllerChanged(rs.metadata?.namespace ?? "");
          });
          inf.on("update", (rs) => {
            rsQueue!.add(podKey(rs));
            pdbController?.controllerChanged(rs.metadata?.namespace ?? "");
          });
          inf.on("delete", (rs) => {
            rsQueue!.add(podKey(rs));
            pdbController?.controllerChanged(rs.metadata?.namespace ?? "");
          });
        },
      );
      rsCache = running.informer;
      informers.push(running);
    }
    if (opts.podDisruptionBudget) {
      const running = startInformer<V1PodDisruptionBudget>(
        opts.store,
        { group: "policy", version: "v1", resource: "poddisruptionbudgets" },
        report,
        (inf) => {
          inf.on("add", (p) => pdbQueue!.add(podKey(p)));
          inf.on("update", (p) => pdbQueue!.add(podKey(p)));
        },
      );
      pdbCache = running.informer;
      informers.push(running);
    }
    let slices: RunningEndpointSlices | undefined;
    if (opts.endpointSlice) {
      slices = startEndpointSlices(kc, opts.store, pods, report);
      informers.push(...slices.informers);
      queues.push(slices.queue);
    }
    const esc = slices?.controller;
    if (opts.replicaSet || opts.podDisruptionBudget || opts.simulateKubelet || opts.endpointSlice) {
      // The informer hands over only the new object: keep the previous one for the ReplicaSet's ownership changes.
      const previous = new Map<string, V1Pod>();
      const running = startInformer<V1Pod>(
        opts.store,
        { group: "", version: "v1", resource: "pods" },
        report,
        (inf) => {
          inf.on("add", (pod) => {
            previous.set(podKey(pod), pod);
            rsController?.podAdded(pod);
            pdbController?.podChanged(pod);
            kubelet?.podSeen(pod);
            esc?.podChanged(pod);
          });
          inf.on("update", (pod) => {
            const before = previous.get(podKey(pod));
            previous.set(podKey(pod), pod);
            rsController?.podUpdated(before, pod);
            pdbController?.podChanged(pod);
            kubelet?.podSeen(pod);
            esc?.podChanged(pod, before);
          });
          inf.on("delete", (pod) => {
            previous.delete(podKey(pod));
            rsController?.podDeleted(pod);
            pdbController?.podChanged(pod);
            kubelet?.podGone(pod);
            esc?.podChanged(pod);
          });
        },
      );
      podsCache = running.informer;
      informers.push(running);
    }
    // Level-based start: look at everything once the caches are filled.
    for (const rs of rsCache.list()) rsQueue?.add(podKey(rs));
    for (const p of pdbCache.list()) pdbQueue?.add(podKey(p));
    for (const pod of podsCache.list()) kubelet?.podSeen(pod);
    slices?.resyncAll();
  } catch (err) {
    await stopAll();
    throw new Error("starting the test controllers", { cause: err });
  }

  return { stop: stopAll, errors };
}
