// A kubelet stand-in for the real API server, for one Node: it binds unscheduled pods to the Node
// (pods/binding: spec.nodeName cannot be set by an update), gives each an address from the pod
// range on the pods' network namespace, starts an HTTP server there on every container port (when
// given servers: on a routed range one server of the caller's answers every address instead),
// writes the Running status the kubelet would (Ready follows the readiness gates), and finishes
// graceful deletion with a zero grace-period delete once the pod is terminating.
import {
  CoreV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1Pod,
} from "@kubernetes/client-node";
import { IpAllocator } from "../apiserver/controllers/ip-allocator.js";
import { isConflict, isNotFound, podKey, splitKey } from "../apiserver/controllers/pods.js";
import { WorkQueue } from "../apiserver/controllers/work-queue.js";
import type { PodNetwork } from "./network.js";
import type { PodServers } from "./pod-servers.js";
import { runningStatus, statusDiffers } from "../apiserver/controllers/pod-status.js";

export interface KubeletOptions {
  kc: KubeConfig;
  nodeName: string;
  network: PodNetwork;
  /** Per-pod servers on every container port; without them (a routed pod range) pods are only given addresses. */
  servers?: PodServers;
  onError: (err: Error) => void;
  now?: () => number;
}

export class Kubelet {
  private readonly core: CoreV1Api;
  private readonly ips: IpAllocator;
  private readonly queue: WorkQueue;
  private readonly now: () => number;
  /** Addresses with servers started, by pod uid. */
  private readonly serving = new Map<string, string>();
  private readonly finishing = new Set<string>();
  private informer?: Informer<V1Pod> & ObjectCache<V1Pod>;
  private stopped = false;
  private restart?: NodeJS.Timeout;

  constructor(private readonly opts: KubeletOptions) {
    this.core = opts.kc.makeApiClient(CoreV1Api);
    this.ips = new IpAllocator(opts.network.podCidr);
    this.now = opts.now ?? Date.now;
    this.queue = new WorkQueue(
      "kubelet",
      (key) => this.sync(key),
      (_key, err) => opts.onError(err as Error),
    );
  }

  async start(): Promise<void> {
    // client-node's informer (not the operator's: the fixture must not share its bugs), which
    // stops on an error other than a 410: started again a moment later, until stopped.
    const informer = makeInformer<V1Pod>(this.opts.kc, "/api/v1/pods", () => this.core.listPodForAllNamespaces());
    informer.on("add", (pod) => this.seen(pod));
    informer.on("update", (pod) => this.seen(pod));
    informer.on("delete", (pod) => void this.gone(pod).catch(this.opts.onError));
    informer.on("error", (err) => {
      this.opts.onError(new Error("kubelet: the pod informer failed", { cause: err }));
      if (!this.stopped) this.restart = setTimeout(() => void informer.start().catch(this.opts.onError), 500);
    });
    this.informer = informer;
    await informer.start();
    for (const pod of informer.list()) this.seen(pod);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restart);
    await this.informer?.stop();
    await this.queue.shutDown();
  }

  private seen(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const ip = pod.status?.podIP;
    if (uid && ip && pod.spec?.nodeName === this.opts.nodeName) this.ips.reserve(uid, ip);
    this.queue.add(podKey(pod));
  }

  private async gone(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    this.finishing.delete(uid);
    await this.stopServing(uid);
    this.ips.release(uid);
  }

  private async stopServing(uid: string): Promise<void> {
    const ip = this.serving.get(uid);
    if (!ip || !this.opts.servers) return;
    this.serving.delete(uid);
    await this.opts.servers.close(ip);
    if (!this.opts.network.routed) await this.opts.network.removePodAddress(ip);
  }

  private async startServing(pod: V1Pod, ip: string): Promise<void> {
    const uid = pod.metadata!.uid!;
    const servers = this.opts.servers;
    if (!servers || this.serving.get(uid) === ip) return;
    if (!this.opts.network.routed) await this.opts.network.addPodAddress(ip);
    for (const c of pod.spec?.containers ?? []) {
      for (const p of c.ports ?? []) if ((p.protocol ?? "TCP") === "TCP") await servers.listen(ip, p.containerPort);
    }
    this.serving.set(uid, ip);
  }

  private async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.informer?.get(name, namespace);
    if (!pod) return;
    const uid = pod.metadata!.uid!;
    if (pod.metadata?.deletionTimestamp) return this.finish(pod);
    if (!pod.spec?.nodeName) return this.bind(pod);
    if (pod.spec.nodeName !== this.opts.nodeName) return;
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") return;
    const ip = pod.status?.podIP ?? this.ips.allocate(uid);
    if (!ip) throw new Error(`no free address in ${this.opts.network.podCidr} for pod ${key}`);
    await this.startServing(pod, ip);
    const status = runningStatus(pod, { ip, hostIp: this.opts.network.nodeIp, now: this.now() });
    if (!statusDiffers(pod.status, status)) return;
    try {
      await this.core.replaceNamespacedPodStatus({ name, namespace, body: { ...structuredClone(pod), status } });
    } catch (err) {
      // Stale cache: the update event brings the newer pod and another sync.
      if (isNotFound(err) || isConflict(err)) return;
      throw new Error(`writing the status of pod ${key}`, { cause: err });
    }
  }

  private async bind(pod: V1Pod): Promise<void> {
    const { name, namespace } = pod.metadata as { name: string; namespace: string };
    try {
      await this.core.createNamespacedPodBinding({
        name,
        namespace,
        body: {
          apiVersion: "v1",
          kind: "Binding",
          metadata: { name, namespace, uid: pod.metadata?.uid },
          target: { apiVersion: "v1", kind: "Node", name: this.opts.nodeName },
        },
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw new Error(`binding pod ${namespace}/${name} to node ${this.opts.nodeName}`, { cause: err });
    }
  }

  /** The containers have stopped: the zero-grace delete removes the pod (or leaves it to its finalizers). */
  private async finish(pod: V1Pod): Promise<void> {
    const uid = pod.metadata!.uid!;
    if (this.finishing.has(uid)) return;
    this.finishing.add(uid);
    await this.stopServing(uid);
    try {
      // In the body: with a body, kube-apiserver ignores the query's DeleteOptions.
      await this.core.deleteNamespacedPod({
        name: pod.metadata!.name!,
        namespace: pod.metadata!.namespace!,
        body: { gracePeriodSeconds: 0, preconditions: { uid } },
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      this.finishing.delete(uid);
      throw new Error(`finishing the deletion of pod ${podKey(pod)}`, { cause: err });
    }
  }
}
