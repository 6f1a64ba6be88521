// A small stand-in for the built-in EndpointSlice controller (kube-controller-manager's is the
// reference, see test/conformance/built-in-controllers.test.ts): what the operator's ReadinessGate
// method reads of a Service with a selector. Slices labelled managed-by endpointslice-controller.k8s.io,
// owned by the Service; one endpoint per selected pod with an address that is neither Succeeded nor
// Failed (ready = Ready and not terminating, serving = Ready, terminating); pods grouped by the ports
// they resolve, at most 100 a slice; one empty slice for a Service that selects nothing. It sees and
// touches only slices with its own managed-by label.
import {
  DiscoveryV1Api,
  type DiscoveryV1EndpointPort,
  type KubeConfig,
  type V1Endpoint,
  type V1EndpointSlice,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import { canonical } from "../patch.js";
import { startInformer, type RunningInformer, type StoreSource } from "./informers.js";
import { isConflict, isNotFound, isPodReady, podKey, splitKey } from "./pods.js";
import { WorkQueue, type SyncResult } from "./work-queue.js";

const SERVICE_NAME = "kubernetes.io/service-name";
const MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER = "endpointslice-controller.k8s.io";
const PER_SLICE = 100;

type Lister<T> = { get(n: string, ns?: string): T | undefined; list(ns?: string): ReadonlyArray<T> };
const empty: Lister<never> = { get: () => undefined, list: () => [] };
const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
/** What a write would change of a slice. */
const view = (s: V1EndpointSlice) => [
  s.metadata?.labels,
  s.metadata?.ownerReferences,
  s.addressType,
  s.endpoints,
  s.ports,
];

/** A Service port's target on a pod: a number as it is, a name looked up in the containers' ports. */
function podPorts(svc: V1Service, pod: V1Pod): DiscoveryV1EndpointPort[] {
  return (svc.spec?.ports ?? []).flatMap((p) => {
    const protocol = p.protocol ?? "TCP";
    const target = p.targetPort ?? p.port;
    const port =
      typeof target === "number"
        ? target
        : (pod.spec?.containers ?? [])
            .flatMap((c) => c.ports ?? [])
            .find((c) => c.name === target && (c.protocol ?? "TCP") === protocol)?.containerPort;
    return port === undefined ? [] : [{ name: p.name ?? "", port, protocol }];
  });
}

function endpointOf(svc: V1Service, pod: V1Pod): V1Endpoint {
  const serving = isPodReady(pod);
  const terminating = Boolean(pod.metadata?.deletionTimestamp);
  const m = pod.metadata!;
  return {
    addresses: [pod.status!.podIP!],
    conditions: {
      ready: svc.spec?.publishNotReadyAddresses === true || (serving && !terminating),
      serving,
      terminating,
    },
    targetRef: { kind: "Pod", namespace: m.namespace, name: m.name, uid: m.uid },
    ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
  };
}

/** The slices a Service should have: its endpoints grouped by ports, in chunks of PER_SLICE. */
function desired(svc: V1Service, pods: V1Pod[]): Array<{ ports: DiscoveryV1EndpointPort[]; endpoints: V1Endpoint[] }> {
  const groups = new Map<string, { ports: DiscoveryV1EndpointPort[]; endpoints: V1Endpoint[] }>();
  for (const pod of [...pods].sort((a, b) => podKey(a).localeCompare(podKey(b)))) {
    const phase = pod.status?.phase;
    if (!pod.status?.podIP || phase === "Succeeded" || phase === "Failed") continue;
    const ports = podPorts(svc, pod);
    const key = JSON.stringify(ports);
    const group = groups.get(key) ?? { ports, endpoints: [] };
    group.endpoints.push(endpointOf(svc, pod));
    groups.set(key, group);
  }
  if (groups.size === 0) return [{ ports: [], endpoints: [] }];
  return [...groups.values()].flatMap((g) =>
    Array.from({ length: Math.ceil(g.endpoints.length / PER_SLICE) }, (_, i) => ({
      ports: g.ports,
      endpoints: g.endpoints.slice(i * PER_SLICE, (i + 1) * PER_SLICE),
    })),
  );
}

class EndpointSliceStandIn {
  services: Lister<V1Service> = empty;
  slices: Lister<V1EndpointSlice> = empty;
  /** Slices created or deleted but not yet seen so by the cache: no sync of their Service until then. */
  private readonly pending = new Map<string, { name: string; gone: boolean }>();

  constructor(
    private readonly discovery: DiscoveryV1Api,
    private readonly pods: Lister<V1Pod>,
    readonly enqueue: (key: string) => void,
  ) {}

  podChanged(pod: V1Pod, before?: V1Pod): void {
    for (const svc of this.services.list(pod.metadata?.namespace)) {
      const sel = svc.spec?.selector ?? {};
      const hit = (p?: V1Pod) => p && Object.entries(sel).every(([k, v]) => p.metadata?.labels?.[k] === v);
      if (Object.keys(sel).length > 0 && (hit(pod) || hit(before))) this.enqueue(podKey(svc));
    }
  }

  sliceSeen(slice: V1EndpointSlice): void {
    const service = slice.metadata?.labels?.[SERVICE_NAME];
    if (service) this.enqueue(`${slice.metadata?.namespace}/${service}`);
  }

  async sync(key: string): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    const svc = this.services.get(name, namespace);
    const selector = svc?.spec?.selector ?? {};
    if (!svc || Object.keys(selector).length === 0 || svc.spec?.type === "ExternalName") return;
    const existing = this.slices.list(namespace).filter((s) => s.metadata?.labels?.[SERVICE_NAME] === name);
    for (const [k, p] of this.pending) {
      if (!k.startsWith(`${key}/`)) continue;
      if (existing.some((s) => s.metadata?.name === p.name) === p.gone) return { requeueAfterMs: 50 };
      this.pending.delete(k);
    }
    const pods = this.pods
      .list(namespace)
      .filter((p) => Object.entries(selector).every(([k, v]) => p.metadata?.labels?.[k] === v));
    const unused = existing
      .filter((s) => s.metadata?.ownerReferences?.some((o) => o.uid === svc.metadata?.uid))
      .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
    const labels = { ...(svc.metadata?.labels ?? {}), [SERVICE_NAME]: name, [MANAGED_BY]: CONTROLLER };
    const owner = { apiVersion: "v1", kind: "Service", name, uid: svc.metadata!.uid!, controller: true };
    try {
      // Slices with the same ports first, then any left over (an emptied placeholder, say), then new ones.
      const wants = desired(svc, pods).map((want) => {
        const i = unused.findIndex((s) => same(s.ports ?? [], want.ports));
        return { want, current: i >= 0 ? unused.splice(i, 1)[0] : undefined };
      });
      for (const { want, current: matched } of wants) {
        const current = matched ?? unused.shift();
        const body: V1EndpointSlice = {
          metadata: { ...(current?.metadata ?? { generateName: `${name}-`, namespace }), labels },
          addressType: svc.spec?.ipFamilies?.[0] === "IPv6" ? "IPv6" : "IPv4",
          ...want,
        };
        body.metadata!.ownerReferences = [{ ...owner, blockOwnerDeletion: true }];
        if (!current) {
          if (svc.metadata?.deletionTimestamp) continue;
          const made = await this.discovery.createNamespacedEndpointSlice({ namespace, body });
          this.pending.set(`${key}/${made.metadata!.name}`, { name: made.metadata!.name!, gone: false });
        } else if (!same(view(current), view(body))) {
          await this.discovery.replaceNamespacedEndpointSlice({ name: current.metadata!.name!, namespace, body });
        }
      }
      for (const s of unused) {
        await this.discovery.deleteNamespacedEndpointSlice({ name: s.metadata!.name!, namespace });
        this.pending.set(`${key}/${s.metadata!.name}`, { name: s.metadata!.name!, gone: true });
      }
    } catch (err) {
      // A stale cache (its watch event brings the next sync), a gone object or a terminating namespace.
      if (isConflict(err) || isNotFound(err) || (err as { code?: number }).code === 403) return;
      throw new Error(`syncing the EndpointSlices of Service ${key}`, { cause: err });
    }
  }
}

export interface RunningEndpointSlices {
  controller: Pick<EndpointSliceStandIn, "podChanged">;
  informers: Array<RunningInformer<any>>;
  queue: WorkQueue;
  resyncAll(): void;
}

export function startEndpointSlices(
  kc: KubeConfig,
  store: StoreSource,
  pods: Lister<V1Pod>,
  report: (err: unknown) => void,
): RunningEndpointSlices {
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const c: EndpointSliceStandIn = new EndpointSliceStandIn(discovery, pods, (key) => queue.add(key));
  const queue = new WorkQueue(
    "endpointslice",
    (key) => c.sync(key),
    (_key, err) => report(err),
  );
  const services = startInformer<V1Service>(store, { group: "", version: "v1", resource: "services" }, report, (inf) =>
    (["add", "update", "delete"] as const).forEach((e) => inf.on(e, (s) => c.enqueue(podKey(s)))),
  );
  c.services = services.informer;
  const slices = startInformer<V1EndpointSlice>(
    store,
    { group: "discovery.k8s.io", version: "v1", resource: "endpointslices" },
    report,
    (inf) => (["add", "update", "delete"] as const).forEach((e) => inf.on(e, (s) => c.sliceSeen(s))),
    [MANAGED_BY, CONTROLLER],
  );
  c.slices = slices.informer;
  const informers = [services, slices];
  return { controller: c, informers, queue, resyncAll: () => c.services.list().forEach((s) => queue.add(podKey(s))) };
}
