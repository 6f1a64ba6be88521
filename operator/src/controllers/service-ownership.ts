// Which policy owns a Service: the oldest live policy naming it (ties by name) with drain method
// EndpointSlice is its one endpoints controller. A Service that is missing or has a selector is
// managed by no policy. A ReadinessGate policy only reports on the Service it names.
import type { ReadinessInput } from "../domain/status.js";
import {
  drainMethodOf,
  serviceNameOf,
  timeOf,
  type ObjectCache,
  type PolicyObject,
  type ServiceObject,
} from "./kube-objects.js";

export class ServiceOwnership {
  constructor(
    private readonly policies: ObjectCache<PolicyObject>,
    private readonly services: ObjectCache<ServiceObject>,
  ) {}

  /** Live EndpointSlice policies naming the Service, oldest first. */
  claimants(namespace: string, service: string): PolicyObject[] {
    return this.policies
      .list(namespace)
      .filter(
        (p) => !p.metadata?.deletionTimestamp && serviceNameOf(p) === service && drainMethodOf(p) === "EndpointSlice",
      )
      .sort(olderFirst);
  }

  /** The name of the policy that owns the Service, if any policy names it. */
  ownerOf(namespace: string, service: string): string | undefined {
    return this.claimants(namespace, service)[0]?.metadata?.name;
  }

  /** Why a policy may not write the endpoints of the Service it names, or undefined when it may. */
  problemFor(namespace: string, policyName: string, service: string): ReadinessInput | undefined {
    const svc = this.services.get(namespace, service);
    if (!svc) return { reason: "ServiceNotFound", message: `Service ${service} not found in namespace ${namespace}` };
    if (hasSelector(svc)) {
      return {
        reason: "ServiceHasSelector",
        message: `Service ${service} has a selector, so the built-in EndpointSlice controller manages it; remove spec.selector to let this policy write its endpoints`,
      };
    }
    const owner = this.ownerOf(namespace, service);
    if (owner !== undefined && owner !== policyName) {
      return {
        reason: "ServiceClaimed",
        message: `Service ${service} is already managed by HealthProbePolicy ${owner}`,
      };
    }
    return undefined;
  }
}

export function hasSelector(svc: ServiceObject): boolean {
  return !!svc.spec?.selector && Object.keys(svc.spec.selector).length > 0;
}

function olderFirst(a: PolicyObject, b: PolicyObject): number {
  const ta = timeOf(a.metadata?.creationTimestamp) ?? 0;
  const tb = timeOf(b.metadata?.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  const na = a.metadata?.name ?? "";
  const nb = b.metadata?.name ?? "";
  return na < nb ? -1 : na > nb ? 1 : 0;
}
