// The built-in EndpointSlice controller for Services with a selector (pkg/controller/endpointslice):
// Service, pod and slice events wake the Service; a sync plans its slices (endpoint-slice-plan.ts)
// and writes only what changed. It sees and touches only slices labelled managed-by
// endpointslice-controller.k8s.io, so slices another controller manages are never its business.
// Like the real EndpointSliceTracker, it remembers the generation of every slice it wrote and
// does not sync a Service while its cache is older than its own writes.
import type { DiscoveryV1Api, V1EndpointSlice, V1Pod, V1Service } from "@kubernetes/client-node";
import { canonical } from "../patch.js";
import {
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  CONTROLLER_NAME,
  planSlices,
  selects,
  serviceSelector,
} from "./endpoint-slice-plan.js";
import { TriggerTimeTracker, withTriggerTime } from "./endpoint-slice-trigger-time.js";
import { isConflict, isNotFound, podKey, splitKey } from "./pods.js";
import type { SyncResult } from "./work-queue.js";

interface Lister<T> {
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): ReadonlyArray<T>;
}

export interface EndpointSliceControllerDeps {
  discovery: DiscoveryV1Api;
  pods: Lister<V1Pod>;
  services: Lister<V1Service>;
  /** This controller's slices only (managed-by endpointslice-controller.k8s.io). */
  slices: Lister<V1EndpointSlice>;
  enqueue: (serviceKey: string) => void;
}

/** How soon a Service whose slices are not yet in the cache is looked at again. */
const STALE_RETRY_MS = 50;
const DELETED = -1;

export class EndpointSliceController {
  /** Per Service key: slice name → generation written, or DELETED. */
  private readonly written = new Map<string, Map<string, number>>();
  private readonly triggers = new TriggerTimeTracker();

  constructor(private readonly deps: EndpointSliceControllerDeps) {}

  serviceChanged(svc: V1Service): void {
    this.deps.enqueue(podKey(svc));
  }

  serviceDeleted(svc: V1Service): void {
    this.written.delete(podKey(svc));
    this.triggers.forget(podKey(svc));
    this.deps.enqueue(podKey(svc));
  }

  /** A pod event wakes every Service that selects the pod, before or after the change. */
  podChanged(pod: V1Pod, before?: V1Pod): void {
    const namespace = pod.metadata?.namespace;
    for (const svc of this.deps.services.list(namespace)) {
      const selector = serviceSelector(svc);
      if (!selector) continue;
      if (selects(selector, pod.metadata?.labels) || (before && selects(selector, before.metadata?.labels)))
        this.deps.enqueue(podKey(svc));
    }
  }

  sliceChanged(slice: V1EndpointSlice): void {
    const service = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
    if (service && slice.metadata?.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME)
      this.deps.enqueue(`${slice.metadata?.namespace ?? ""}/${service}`);
  }

  sliceDeleted(slice: V1EndpointSlice): void {
    const service = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
    if (!service) return;
    const key = `${slice.metadata?.namespace ?? ""}/${service}`;
    this.written.get(key)?.delete(slice.metadata?.name ?? "");
    this.sliceChanged(slice);
  }

  async sync(key: string): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    const svc = this.deps.services.get(name, namespace);
    // A deleted Service's slices go with it (the garbage collector follows their owner reference).
    if (!svc) {
      this.written.delete(key);
      this.triggers.forget(key);
      return;
    }
    const selector = serviceSelector(svc);
    if (!selector) return;
    const existing = this.deps.slices.list(namespace).filter((s) => s.metadata?.labels?.[LABEL_SERVICE_NAME] === name);
    if (this.cacheIsBehind(key, existing)) return { requeueAfterMs: STALE_RETRY_MS };
    const pods = this.deps.pods.list(namespace).filter((p) => selects(selector, p.metadata?.labels));
    const triggerTime = this.triggers.compute(key, svc, pods);
    const plan = planSlices(svc, pods, existing);
    const deleting = Boolean(svc.metadata?.deletionTimestamp);
    try {
      // No new slices for a Service being deleted: the garbage collector would race them.
      if (!deleting) for (const slice of plan.create) await this.create(key, withTriggerTime(slice, triggerTime));
      for (const slice of plan.update) {
        const current = existing.find((s) => s.metadata?.name === slice.metadata?.name);
        if (!current || differs(current, slice)) await this.update(key, withTriggerTime(slice, triggerTime));
      }
      for (const slice of plan.delete) await this.remove(key, slice);
    } catch (err) {
      // A stale cache: the watch event of the newer slice wakes the Service again.
      if (isConflict(err)) return;
      throw new Error(`syncing the EndpointSlices of Service ${key}`, { cause: err });
    }
  }

  private track(key: string, name: string, generation: number): void {
    const byName = this.written.get(key) ?? new Map<string, number>();
    byName.set(name, generation);
    this.written.set(key, byName);
  }

  /** StaleSlices: a slice written but not yet seen, seen older than written, or deleted but still there. */
  private cacheIsBehind(key: string, cached: V1EndpointSlice[]): boolean {
    const byName = this.written.get(key);
    if (!byName) return false;
    let behind = false;
    for (const [name, generation] of byName) {
      const slice = cached.find((s) => s.metadata?.name === name);
      const seen = slice ? (slice.metadata?.generation ?? 0) : undefined;
      const caughtUp = generation === DELETED ? seen === undefined : seen !== undefined && seen >= generation;
      if (caughtUp) byName.delete(name);
      else behind = true;
    }
    if (byName.size === 0) this.written.delete(key);
    return behind;
  }

  private async create(key: string, slice: V1EndpointSlice): Promise<void> {
    try {
      const created = await this.deps.discovery.createNamespacedEndpointSlice({
        namespace: slice.metadata!.namespace!,
        body: slice,
      });
      this.track(key, created.metadata!.name!, created.metadata?.generation ?? 0);
    } catch (err) {
      // A terminating namespace refuses new content: nothing to do for it.
      if ((err as { code?: number }).code === 403 || isNotFound(err)) return;
      throw err;
    }
  }

  private async update(key: string, slice: V1EndpointSlice): Promise<void> {
    try {
      const updated = await this.deps.discovery.replaceNamespacedEndpointSlice({
        name: slice.metadata!.name!,
        namespace: slice.metadata!.namespace!,
        body: slice,
      });
      this.track(key, updated.metadata!.name!, updated.metadata?.generation ?? 0);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  private async remove(key: string, slice: V1EndpointSlice): Promise<void> {
    try {
      await this.deps.discovery.deleteNamespacedEndpointSlice({
        name: slice.metadata!.name!,
        namespace: slice.metadata!.namespace!,
      });
      this.track(key, slice.metadata!.name!, DELETED);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** Whether a planned slice changes what the cached one says. */
function differs(current: V1EndpointSlice, next: V1EndpointSlice): boolean {
  const view = (s: V1EndpointSlice) =>
    JSON.stringify(
      canonical({
        labels: s.metadata?.labels ?? {},
        owners: s.metadata?.ownerReferences ?? [],
        addressType: s.addressType,
        endpoints: s.endpoints ?? [],
        ports: s.ports ?? [],
      }),
    );
  return view(current) !== view(next);
}
