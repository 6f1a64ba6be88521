import { describe, it, expect } from "@jest/globals";
import type { AuditEvent } from "../../hack/control-plane/audit.js";
import { checkRequestsAgainstRbac } from "./rbac.js";
import { requestsInAudit } from "./rbac-audit.js";

const OPERATOR = "system:serviceaccount:healthprobe-system:healthprobe-healthprobe-operator";

function anEvent(over: Partial<AuditEvent> = {}): AuditEvent {
  return {
    auditID: "a1",
    stage: "ResponseComplete",
    verb: "get",
    requestURI: "/api/v1/namespaces/shop/pods/web-1",
    requestReceivedTimestamp: "2026-01-01T00:00:00.000000Z",
    user: { username: OPERATOR },
    objectRef: { resource: "pods", namespace: "shop", name: "web-1", apiVersion: "v1" },
    responseStatus: { code: 200 },
    ...over,
  };
}

describe("requestsInAudit", () => {
  it("maps a request's objectRef, with the core group as the empty group", () => {
    expect(requestsInAudit([anEvent({ userAgent: "healthprobe-operator" })])).toEqual([
      {
        time: "2026-01-01T00:00:00.000000Z",
        user: OPERATOR,
        verb: "get",
        method: "GET",
        path: "/api/v1/namespaces/shop/pods/web-1",
        group: "",
        version: "v1",
        resource: "pods",
        subresource: "",
        namespace: "shop",
        name: "web-1",
        code: 200,
        userAgent: "healthprobe-operator",
      },
    ]);
  });

  it("keeps a named group, a subresource, the path without its query, and the verb's method", () => {
    const [eviction, patch] = requestsInAudit([
      anEvent({
        auditID: "e",
        verb: "create",
        requestURI: "/api/v1/namespaces/shop/pods/web-1/eviction?timeout=10s",
        objectRef: { resource: "pods", subresource: "eviction", namespace: "shop", name: "web-1", apiVersion: "v1" },
        responseStatus: { code: 201 },
      }),
      anEvent({
        auditID: "p",
        verb: "patch",
        requestURI: "/apis/events.k8s.io/v1/namespaces/shop/events/web-1.abc",
        objectRef: {
          resource: "events",
          namespace: "shop",
          name: "web-1.abc",
          apiGroup: "events.k8s.io",
          apiVersion: "v1",
        },
      }),
    ]);
    expect(eviction).toMatchObject({
      verb: "create",
      method: "POST",
      path: "/api/v1/namespaces/shop/pods/web-1/eviction",
      resource: "pods",
      subresource: "eviction",
      code: 201,
    });
    expect(patch).toMatchObject({ verb: "patch", method: "PATCH", group: "events.k8s.io", resource: "events" });
  });

  it("counts a watch audited when its response started and again when it completed once, with its final code", () => {
    const watch = {
      auditID: "w",
      verb: "watch",
      requestURI: "/api/v1/pods?watch=true&resourceVersion=5",
      objectRef: { resource: "pods", apiVersion: "v1" },
    };
    const started = anEvent({ ...watch, stage: "ResponseStarted", responseStatus: { code: 200 } });
    const completed = anEvent({ ...watch, stage: "ResponseComplete", responseStatus: { code: 200 } });
    const other = anEvent({ auditID: "g" });
    expect(requestsInAudit([started, other, completed]).map((r) => `${r.verb} ${r.resource}`)).toEqual([
      "watch pods",
      "get pods",
    ]);
    // A later stage never gives way to an earlier one read after it.
    const failed = anEvent({ ...watch, stage: "ResponseComplete", responseStatus: { code: 500 } });
    expect(requestsInAudit([failed, started]).map((r) => r.code)).toEqual([500]);
    // Still open: its ResponseStarted stage alone.
    expect(requestsInAudit([started])).toHaveLength(1);
  });

  it("leaves other users out when asked for one, and keeps events without an auditID apart", () => {
    const events = [
      anEvent({ auditID: undefined }),
      anEvent({ auditID: undefined }),
      anEvent({ auditID: "k", user: { username: "kubelet" } }),
    ];
    expect(requestsInAudit(events, { user: OPERATOR })).toHaveLength(2);
    expect(requestsInAudit(events)).toHaveLength(3);
  });

  it("gives a non-resource request no resource, so the RBAC check skips it", () => {
    const [version] = requestsInAudit([anEvent({ verb: "get", requestURI: "/version", objectRef: undefined })]);
    expect(version).toMatchObject({ resource: "", method: "GET", path: "/version" });
    expect(
      checkRequestsAgainstRbac(
        [version!],
        [{ apiGroups: [""], resources: ["pods"], verbs: ["get"], scope: "cluster" }],
      ),
    ).toEqual({ missing: [], unused: [{ verb: "get", apiGroup: "", resource: "pods", scope: "cluster" }] });
  });
});
