// With shards on, records what the shard invariants read: each change of the simulated
// namespace's handover marker as the store made it (the request log has no bodies), with how far
// the request log had got, and the namespace's policy count; the writes come from the log itself.
import type { TestApiServer } from "../../hack/apiserver/index.js";
import { isWrite } from "../../hack/apiserver/request-log.js";
import type { ShardRecord } from "./snapshot.js";

const MARKER_KIND = "healthprobe.io/shard-kind";
const MARKER_NAMESPACE = "healthprobe.io/shard-namespace";
/** In a replica's own shard Lease's name (`<id>-shard-<identity>-<hash>`), never in a marker's (`<id>-ns-…`). */
const SHARD_LEASE_INFIX = "-shard-";
/** The namespaced objects the operator writes for a namespace it owns. */
const OWNED_KINDS = new Set(["endpointslices", "healthprobepolicies", "events", "pods", "configmaps"]);

interface Obj {
  metadata?: { namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { holderIdentity?: string };
}

export class ShardRecorder {
  private readonly markers: ShardRecord["markers"] = [];
  private readonly policies: ShardRecord["policies"] = [];
  private policyCount = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly server: TestApiServer,
    private readonly namespace: string,
    private readonly start: number,
    private readonly boundMs: number,
    private readonly leaseMs: number,
    private readonly isOperator: (user: string) => boolean,
    onTake: (user: string, at: number) => void,
  ) {
    this.unsubscribe = server.store.subscribe((e) => {
      const o = e.object as Obj;
      if (e.resource.endsWith("leases") && o.metadata?.labels?.[MARKER_KIND] === "marker") {
        if (o.metadata.annotations?.[MARKER_NAMESPACE] !== namespace) return;
        const holder = e.type === "DELETED" ? "" : (o.spec?.holderIdentity ?? "");
        if (this.markers.at(-1)?.holder === holder) return;
        this.markers.push({ pos: server.requestLog.length, at: Date.now(), holder });
        if (holder) onTake(holder, Date.now());
      } else if (e.resource.endsWith("healthprobepolicies") && o.metadata?.namespace === namespace) {
        if (e.type === "ADDED") this.policyCount++;
        if (e.type === "DELETED") this.policyCount--;
        if (e.type !== "MODIFIED") this.policies.push({ at: Date.now(), count: this.policyCount });
      }
    });
  }

  record(now: number): ShardRecord {
    const log = this.server.requestLog;
    const writes: ShardRecord["writes"] = [];
    const requests: ShardRecord["requests"] = [];
    const renewals: ShardRecord["renewals"] = [];
    log.forEach((e, pos) => {
      if (!this.isOperator(e.user)) return;
      const at = Date.parse(e.time);
      requests.push({ at, user: e.user });
      if (e.resource === "leases" && isWrite(e) && e.code < 400 && e.name?.includes(SHARD_LEASE_INFIX))
        renewals.push({ at, user: e.user });
      if (e.namespace === this.namespace && isWrite(e) && e.code < 400 && OWNED_KINDS.has(e.resource))
        writes.push({
          pos,
          at,
          user: e.user,
          what: `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""} ${e.name}`,
        });
    });
    return {
      start: this.start,
      now,
      boundMs: this.boundMs,
      leaseMs: this.leaseMs,
      markers: [...this.markers],
      writes,
      requests,
      renewals,
      policies: [...this.policies],
    };
  }

  close(): void {
    this.unsubscribe();
  }
}
