// Starts the EndpointSlice controller's informers (Services, and only its own slices) and work
// queue; pod events come from the shared pod informer through the returned controller.
import {
  CoreV1Api,
  DiscoveryV1Api,
  type KubeConfig,
  type V1EndpointSlice,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import type { KubeClient } from "../../../operator/src/adapters/kube-client.js";
import { EndpointSliceController } from "./endpoint-slice-controller.js";
import { CONTROLLER_NAME, LABEL_MANAGED_BY } from "./endpoint-slice-plan.js";
import { startInformer, type RunningInformer } from "./informers.js";
import { podKey } from "./pods.js";
import { WorkQueue } from "./work-queue.js";

export interface RunningEndpointSliceController {
  controller: EndpointSliceController;
  informers: Array<RunningInformer<any>>;
  queue: WorkQueue;
  /** Looks at every Service once the pod cache is filled too. */
  resyncAll(): void;
}

export async function startEndpointSliceController(
  kc: KubeConfig,
  /** What the informers watch through (informers.ts watchClientOf). */
  watchClient: KubeClient,
  pods: { get(n: string, ns?: string): V1Pod | undefined; list(ns?: string): ReadonlyArray<V1Pod> },
  report: (err: unknown) => void,
): Promise<RunningEndpointSliceController> {
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  let servicesCache: {
    get(n: string, ns?: string): V1Service | undefined;
    list(ns?: string): ReadonlyArray<V1Service>;
  } = { get: () => undefined, list: () => [] };
  let slicesCache: {
    get(n: string, ns?: string): V1EndpointSlice | undefined;
    list(ns?: string): ReadonlyArray<V1EndpointSlice>;
  } = { get: () => undefined, list: () => [] };
  const enqueue = (key: string): void => queue.add(key);
  const controller = new EndpointSliceController({
    discovery,
    pods,
    services: { get: (n, ns) => servicesCache.get(n, ns), list: (ns) => servicesCache.list(ns) },
    slices: { get: (n, ns) => slicesCache.get(n, ns), list: (ns) => slicesCache.list(ns) },
    enqueue,
  });
  const queue: WorkQueue = new WorkQueue(
    "endpointslice",
    (key) => controller.sync(key),
    (_key, err) => report(err),
  );
  const informers: Array<RunningInformer<any>> = [];
  try {
    const services = await startInformer<V1Service>(
      watchClient,
      "/api/v1/services",
      () => core.listServiceForAllNamespaces(),
      report,
      (inf) => {
        inf.on("add", (s) => controller.serviceChanged(s));
        inf.on("update", (s) => controller.serviceChanged(s));
        inf.on("delete", (s) => controller.serviceDeleted(s));
      },
    );
    informers.push(services);
    servicesCache = services.informer;
    const selector = `${LABEL_MANAGED_BY}=${CONTROLLER_NAME}`;
    const slices = await startInformer<V1EndpointSlice>(
      watchClient,
      "/apis/discovery.k8s.io/v1/endpointslices",
      () => discovery.listEndpointSliceForAllNamespaces({ labelSelector: selector }),
      report,
      (inf) => {
        inf.on("add", (s) => controller.sliceChanged(s));
        inf.on("update", (s) => controller.sliceChanged(s));
        inf.on("delete", (s) => controller.sliceDeleted(s));
      },
      selector,
    );
    informers.push(slices);
    slicesCache = slices.informer;
  } catch (err) {
    await Promise.all(informers.map((i) => i.stop()));
    await queue.shutDown();
    throw err;
  }
  return { controller, informers, queue, resyncAll: () => servicesCache.list().forEach((s) => queue.add(podKey(s))) };
}
