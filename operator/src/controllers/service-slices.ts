// One reconcile per Service key (its own queue, never shared with policy keys): the slices this
// operator wrote for a Service it no longer manages are removed. A selector-less Service gets its
// endpoints only from whoever writes them; with no policy managing it (the policy was deleted or
// now names another Service), or with the Service gone or given a selector (the built-in
// controller then writes its own), frozen slices would keep drained pods drained and deleted
// pods listed forever.
import { newReconcileId, type Logger } from "../runtime/logger.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import type { Endpoints } from "./endpoints.js";
import { splitKey, type ObjectCache, type ServiceObject } from "./kube-objects.js";
import { hasSelector, type ServiceOwnership } from "./service-ownership.js";

export interface ServiceSlicesOptions {
  services: ObjectCache<ServiceObject>;
  ownership: ServiceOwnership;
  endpoints: Endpoints;
  logger: Logger;
  isLeader: () => boolean;
}

export class ServiceSlices {
  constructor(private readonly o: ServiceSlicesOptions) {}

  async reconcile(serviceKey: string): Promise<ReconcileResult> {
    if (!this.o.isLeader()) return;
    const [namespace, service] = splitKey(serviceKey);
    const why = this.whyUnmanaged(namespace, service);
    if (why === undefined) return;
    const log = this.o.logger.child({ service: serviceKey, reconcileId: newReconcileId() });
    await this.o.endpoints.removeAll(log, namespace, service, why);
    return;
  }

  /** Why the operator no longer manages the Service's endpoints, or undefined when it does. */
  whyUnmanaged(namespace: string, service: string): string | undefined {
    const svc = this.o.services.get(namespace, service);
    if (!svc) return "its Service is gone";
    if (hasSelector(svc)) return "its Service has a selector, so the built-in controller manages it";
    if (this.o.ownership.ownerOf(namespace, service) === undefined) return "no policy manages its Service";
    return undefined;
  }
}
