// The endpoints part: a Service's EndpointSlices, planned by the pure core and applied exactly as
// planned, creates first, then updates, then deletes (as the built-in controller does), so a
// failing create never leaves the Service without endpoints. A write tracker keeps a reconcile
// from planning on a cache that has not caught up with this process's own writes.
import { planEndpointSlices } from "../domain/endpoint-slice-plan.js";
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_OPERATOR,
} from "../domain/endpoint-slice-types.js";
import type { EndpointSliceObject, SlicePod, SliceService } from "../domain/endpoint-slice-types.js";
import type { Clock } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import {
  isKubeletReady,
  nameOf,
  podIPsOf,
  uidOf,
  type KubeObject,
  type ObjectCache,
  type PodObject,
  type ServiceObject,
} from "./kube-objects.js";
import { conflictIsStale, type PolicyWriter } from "./policy-writer.js";
import { SliceWriteTracker } from "./slice-write-tracker.js";

const ZONE_LABEL = "topology.kubernetes.io/zone";

export interface EndpointsOptions {
  slices: ObjectCache<KubeObject>;
  nodes: ObjectCache<KubeObject>;
  writer: Pick<PolicyWriter, "createEndpointSlice" | "replaceEndpointSlice" | "deleteEndpointSlice">;
  clock: Clock;
  maxEndpointsPerSlice?: number;
}

/** Which pods the Service's current slices list, by uid. */
export interface Rotation {
  /** Listed with ready: true. */
  ready: Set<string>;
  /** Listed with ready: false. */
  notReady: Set<string>;
}

export interface ApplyEndpointsInput {
  service: ServiceObject;
  /** Every pod the policy selects (the planner filters). */
  pods: readonly PodObject[];
  admitted: (uid: string) => boolean;
  /** The slices as they stand (from current()). */
  existing: EndpointSliceObject[];
}

export class Endpoints {
  private readonly tracker: SliceWriteTracker;

  constructor(private readonly o: EndpointsOptions) {
    this.tracker = new SliceWriteTracker(o.clock);
  }

  /** The Service's slices this operator manages, from the cache. */
  current(namespace: string, service: string): EndpointSliceObject[] {
    return this.o.slices
      .list(namespace)
      .filter(
        (s) =>
          s.metadata?.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_OPERATOR &&
          s.metadata?.labels?.[LABEL_SERVICE_NAME] === service,
      ) as unknown as EndpointSliceObject[];
  }

  /** Whether the cache has not yet caught up with this process's writes to the Service's slices. */
  isStale(namespace: string, service: string, slices: readonly EndpointSliceObject[]): boolean {
    return this.tracker.isStale(`${namespace}/${service}`, slices as never);
  }

  /** Names of the Services in a namespace that have slices this operator manages. */
  managedServices(namespace?: string): Array<{ namespace: string; service: string }> {
    const seen = new Map<string, { namespace: string; service: string }>();
    for (const s of this.o.slices.list(namespace)) {
      const labels = s.metadata?.labels ?? {};
      const service = labels[LABEL_SERVICE_NAME];
      if (labels[LABEL_MANAGED_BY] !== MANAGED_BY_OPERATOR || !service) continue;
      const ns = s.metadata?.namespace ?? "";
      seen.set(`${ns}/${service}`, { namespace: ns, service });
    }
    return [...seen.values()];
  }

  /** Plans the Service's slices and applies the plan as planned: create, then update, then delete. */
  async apply(log: Logger, input: ApplyEndpointsInput): Promise<void> {
    const service = toSliceService(input.service);
    const key = `${service.namespace}/${service.name}`;
    const plan = planEndpointSlices({
      service,
      pods: input.pods.map(toSlicePod),
      admitted: input.admitted,
      nodeZones: this.nodeZones(),
      existing: input.existing,
      maxEndpointsPerSlice: this.o.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    });
    for (const c of plan.create) this.tracker.wrote(key, (await this.o.writer.createEndpointSlice(c)) as never);
    for (const u of plan.update)
      this.tracker.wrote(key, (await conflictIsStale(() => this.o.writer.replaceEndpointSlice(u))) as never);
    for (const d of plan.delete) {
      await this.o.writer.deleteEndpointSlice(d.namespace, d.name);
      this.tracker.deleted(key, d.name);
    }
    for (const change of plan.changes)
      log.info({ slice: change.slice, action: change.action, reason: change.reason }, "EndpointSlice written");
  }

  /** Deletes every slice this operator wrote for the Service (it manages it no longer). */
  async removeAll(log: Logger, namespace: string, service: string, why: string): Promise<number> {
    const slices = this.current(namespace, service);
    for (const slice of slices) {
      const name = slice.metadata.name ?? "";
      await this.o.writer.deleteEndpointSlice(namespace, name);
      this.tracker.deleted(`${namespace}/${service}`, name);
      log.info({ slice: name, service }, `EndpointSlice deleted: ${why}`);
    }
    return slices.length;
  }

  private nodeZones(): Record<string, string> {
    const zones: Record<string, string> = {};
    for (const node of this.o.nodes.list()) {
      const zone = node.metadata?.labels?.[ZONE_LABEL];
      if (zone && node.metadata?.name) zones[node.metadata.name] = zone;
    }
    return zones;
  }
}

/** Which pods the slices list as ready and as not ready. */
export function rotationOf(slices: readonly EndpointSliceObject[]): Rotation {
  const rotation: Rotation = { ready: new Set(), notReady: new Set() };
  for (const slice of slices) {
    for (const e of slice.endpoints ?? []) {
      const uid = e.targetRef?.uid;
      if (!uid) continue;
      if (e.conditions?.ready === false) rotation.notReady.add(uid);
      else rotation.ready.add(uid);
    }
  }
  return rotation;
}

function toSliceService(service: ServiceObject): SliceService {
  const out: SliceService = {
    name: nameOf(service),
    namespace: service.metadata?.namespace ?? "",
    uid: uidOf(service),
    ports: (service.spec?.ports ?? []).map((p) => {
      const port: SliceService["ports"][number] = { port: p.port, protocol: (p.protocol ?? "TCP") as "TCP" };
      if (p.name) port.name = p.name;
      if (p.targetPort !== undefined) port.targetPort = p.targetPort;
      if (p.appProtocol) port.appProtocol = p.appProtocol;
      return port;
    }),
  };
  if (service.spec?.ipFamilies) out.ipFamilies = service.spec.ipFamilies as Array<"IPv4" | "IPv6">;
  return out;
}

function toSlicePod(pod: PodObject): SlicePod {
  const p: SlicePod = {
    name: nameOf(pod),
    namespace: pod.metadata?.namespace ?? "",
    uid: uidOf(pod),
    podIPs: podIPsOf(pod),
    kubeletReady: isKubeletReady(pod),
    terminating: !!pod.metadata?.deletionTimestamp,
    containers: (pod.spec?.containers ?? []).map((c) => ({
      ports: (c.ports ?? []).map((port) => ({ ...port })),
    })) as SlicePod["containers"],
  };
  if (pod.metadata?.resourceVersion) p.resourceVersion = pod.metadata.resourceVersion;
  if (pod.spec?.nodeName) p.nodeName = pod.spec.nodeName;
  if (pod.spec?.hostname) p.hostname = pod.spec.hostname;
  if (pod.spec?.subdomain) p.subdomain = pod.spec.subdomain;
  if (pod.status?.phase) p.phase = pod.status.phase;
  return p;
}
