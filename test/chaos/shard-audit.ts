// Sharded replicas' writes as kube-apiserver's audit log records them: each replica is a user of
// its own, so user.username names the writer. Object writes are kept at Metadata level; the
// handover markers' writes at Request level, since the holder a write names is in its body only.
import { ACTING_RESOURCES, isWriteVerb, OPERATOR_NAMESPACE, type RecordedWrite } from "../support/shard-replicas.js";
import { auditEventsIn, type AuditEvent } from "../../hack/control-plane/audit.js";

const MARKER_NAMESPACE = "healthprobe.io/shard-namespace";

/** Marker and shard Lease writes with their bodies, the users' other writes without; nothing else. */
export function shardAuditPolicy(users: string[]): object {
  return {
    apiVersion: "audit.k8s.io/v1",
    kind: "Policy",
    omitStages: ["RequestReceived"],
    rules: [
      {
        level: "Request",
        users,
        verbs: ["create", "update", "patch"],
        namespaces: [OPERATOR_NAMESPACE],
        resources: [{ group: "coordination.k8s.io", resources: ["leases"] }],
      },
      { level: "Metadata", users, verbs: ["create", "update", "patch", "delete", "deletecollection"] },
      { level: "None" },
    ],
  };
}

/** Microseconds since the epoch from an audit timestamp (RFC 3339 with up to 9 fraction digits). */
export function auditMicros(ts: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(ts);
  if (!m) throw new Error(`not an audit timestamp: ${JSON.stringify(ts)}`);
  return Date.parse(`${m[1]}Z`) * 1000 + Number((m[2] ?? "").padEnd(6, "0").slice(0, 6));
}

function toRecord(e: AuditEvent, users: ReadonlySet<string>, namespaces: ReadonlySet<string>): RecordedWrite[] {
  const ref = e.objectRef ?? {};
  const user = e.user?.username ?? "";
  if (e.stage !== "ResponseComplete" || !users.has(user) || !isWriteVerb(e.verb ?? "")) return [];
  const base = {
    user,
    start: auditMicros(e.requestReceivedTimestamp ?? ""),
    end: auditMicros(e.stageTimestamp ?? ""),
    code: e.responseStatus?.code ?? 0,
    what: `${e.verb} ${ref.resource}${ref.subresource ? `/${ref.subresource}` : ""} ${ref.name ?? ""}`.trim(),
  };
  if (namespaces.has(ref.namespace ?? "") && ACTING_RESOURCES.has(ref.resource ?? ""))
    return [{ ...base, namespace: ref.namespace!, marker: false }];
  const about = e.requestObject?.metadata?.annotations?.[MARKER_NAMESPACE];
  if (ref.resource !== "leases" || ref.namespace !== OPERATOR_NAMESPACE || !about || !namespaces.has(about)) return [];
  // A marker write without its body would leave its holder unknown: the policy above must keep it.
  if (e.requestObject?.spec === undefined) throw new Error(`audit event for ${base.what} has no request body`);
  return [{ ...base, namespace: about, marker: true, holder: e.requestObject.spec.holderIdentity ?? "" }];
}

/**
 * The users' writes for the namespaces and the namespaces' marker writes, from the audit log's
 * JSON lines (a last line still being written is left out).
 */
export function shardWritesInAudit(text: string, users: string[], namespaces: readonly string[]): RecordedWrite[] {
  const [u, ns] = [new Set(users), new Set(namespaces)];
  return auditEventsIn(text).flatMap((e) => toRecord(e, u, ns));
}
