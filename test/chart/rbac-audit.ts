// kube-apiserver's audit log in the shape of the API test server's request log, so that the
// chart's RBAC can be compared (checkRequestsAgainstRbac in rbac.ts) with what a client really did
// on a real control plane. The audit verb is already the authorizer's (a list with watch=true is
// audited as watch). Each request counts once, though a long-running one (a watch) is audited when
// its response starts and again when it completes: its latest stage is kept.
import type { AuditEvent } from "../../hack/control-plane/audit.js";
import type { RequestLogEntry } from "../../hack/apiserver/index.js";

const METHODS: Record<string, string> = {
  get: "GET",
  list: "GET",
  watch: "GET",
  create: "POST",
  update: "PUT",
  patch: "PATCH",
  delete: "DELETE",
  deletecollection: "DELETE",
};

/** How far along a request an audit stage is: a later one replaces an earlier one of the same request. */
const STAGE_ORDER: Record<string, number> = { RequestReceived: 0, ResponseStarted: 1, ResponseComplete: 2, Panic: 2 };

function entryOf(e: AuditEvent): RequestLogEntry {
  const ref = e.objectRef ?? {};
  const verb = e.verb ?? "";
  return {
    time: e.requestReceivedTimestamp ?? "",
    user: e.user?.username ?? "",
    verb,
    // Non-resource requests are audited with the HTTP method as the verb (get, post, ...).
    method: METHODS[verb] ?? verb.toUpperCase(),
    path: (e.requestURI ?? "").split("?")[0]!,
    group: ref.apiGroup ?? "",
    version: ref.apiVersion ?? "",
    resource: ref.resource ?? "",
    subresource: ref.subresource ?? "",
    namespace: ref.namespace ?? "",
    name: ref.name ?? "",
    // 0: no response yet (only the RequestReceived stage was audited).
    code: e.responseStatus?.code ?? 0,
    ...(e.userAgent ? { userAgent: e.userAgent } : {}),
  };
}

/** The requests in audit events, one per request (by auditID), in the order they were first audited; of one user when given. */
export function requestsInAudit(events: readonly AuditEvent[], filter: { user?: string } = {}): RequestLogEntry[] {
  const latest = new Map<string, AuditEvent>();
  events.forEach((e, i) => {
    if (filter.user !== undefined && e.user?.username !== filter.user) return;
    const id = e.auditID ?? `#${i}`;
    const seen = latest.get(id);
    if (!seen || (STAGE_ORDER[e.stage ?? ""] ?? 0) >= (STAGE_ORDER[seen.stage ?? ""] ?? 0)) latest.set(id, e);
  });
  return [...latest.values()].map(entryOf);
}
