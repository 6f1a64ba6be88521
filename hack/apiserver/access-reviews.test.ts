// TokenReview and SubjectAccessReview of the test server, through client-node's typed APIs.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { AuthenticationV1Api, AuthorizationV1Api } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { kubeConfigFor, objectApi } from "./test-kit.js";

let server: TestApiServer;
let authn: AuthenticationV1Api;
let authz: AuthorizationV1Api;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  authn = kubeConfigFor(server, "operator").makeApiClient(AuthenticationV1Api);
  authz = kubeConfigFor(server, "operator").makeApiClient(AuthorizationV1Api);
  const api = objectApi(server);
  await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } });
  await api.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "scraper", namespace: "apps" } });
  const rbac = "rbac.authorization.k8s.io/v1";
  await api.create({
    apiVersion: rbac,
    kind: "ClusterRole",
    metadata: { name: "debug-reader" },
    rules: [{ nonResourceURLs: ["/debug/*"], verbs: ["get"] }],
  });
  await api.create({
    apiVersion: rbac,
    kind: "ClusterRoleBinding",
    metadata: { name: "auditors-debug" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "debug-reader" },
    subjects: [{ kind: "Group", name: "auditors" }],
  });
  await api.create({
    apiVersion: rbac,
    kind: "Role",
    metadata: { name: "pod-reader", namespace: "apps" },
    rules: [{ apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] }],
  });
  await api.create({
    apiVersion: rbac,
    kind: "RoleBinding",
    metadata: { name: "scraper-pods", namespace: "apps" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
    subjects: [{ kind: "ServiceAccount", name: "scraper" }],
  });
});

afterAll(async () => {
  await server.stop();
});

describe("TokenReview", () => {
  const cases: Array<{ name: string; token: string; user?: { username: string; groups: string[] } }> = [
    {
      name: "a user's token (its name) authenticates that user",
      token: "alice",
      user: { username: "alice", groups: ["system:authenticated"] },
    },
    {
      name: "admin is in system:masters",
      token: "admin",
      user: { username: "admin", groups: ["system:masters", "system:authenticated"] },
    },
    {
      name: "an existing ServiceAccount's token authenticates it with its groups",
      token: "system:serviceaccount:apps:scraper",
      user: {
        username: "system:serviceaccount:apps:scraper",
        groups: ["system:serviceaccounts", "system:serviceaccounts:apps", "system:authenticated"],
      },
    },
    { name: "a missing ServiceAccount's token authenticates nobody", token: "system:serviceaccount:apps:gone" },
    { name: "a malformed ServiceAccount token authenticates nobody", token: "system:serviceaccount:apps" },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const review = await authn.createTokenReview({ body: { spec: { token: c.token } } });
      expect(review.status?.authenticated).toBe(c.user !== undefined);
      if (c.user) expect(review.status?.user).toMatchObject(c.user);
      else expect(review.status?.error).toBe("invalid bearer token");
    });
  }

  it("rejects a review without a token as invalid", async () => {
    await expect(authn.createTokenReview({ body: { spec: {} as { token: string } } })).rejects.toMatchObject({
      code: 422,
    });
  });
});

describe("SubjectAccessReview", () => {
  const sa = {
    user: "system:serviceaccount:apps:scraper",
    groups: ["system:serviceaccounts", "system:serviceaccounts:apps", "system:authenticated"],
  };
  const cases: Array<{ name: string; spec: Record<string, unknown>; allowed: boolean }> = [
    {
      name: "a group's ClusterRoleBinding allows a path under a wildcard URL",
      spec: { user: "bob", groups: ["auditors"], nonResourceAttributes: { path: "/debug/targets", verb: "get" } },
      allowed: true,
    },
    {
      name: "a wildcard URL does not reach beyond its prefix",
      spec: { user: "bob", groups: ["auditors"], nonResourceAttributes: { path: "/metrics", verb: "get" } },
      allowed: false,
    },
    {
      name: "a verb the rule does not list is denied",
      spec: { user: "bob", groups: ["auditors"], nonResourceAttributes: { path: "/debug/targets", verb: "post" } },
      allowed: false,
    },
    {
      name: "a user without a binding is denied",
      spec: {
        user: "carol",
        groups: ["system:authenticated"],
        nonResourceAttributes: { path: "/debug/targets", verb: "get" },
      },
      allowed: false,
    },
    {
      name: "system:masters may do anything",
      spec: { user: "admin", groups: ["system:masters"], nonResourceAttributes: { path: "/anything", verb: "delete" } },
      allowed: true,
    },
    {
      name: "a RoleBinding allows its namespace's resources to a ServiceAccount",
      spec: { ...sa, resourceAttributes: { namespace: "apps", verb: "get", resource: "pods", subresource: "log" } },
      allowed: true,
    },
    {
      name: "a RoleBinding allows nothing in another namespace",
      spec: { ...sa, resourceAttributes: { namespace: "default", verb: "get", resource: "pods" } },
      allowed: false,
    },
    {
      name: "a resource the Role does not list is denied",
      spec: { ...sa, resourceAttributes: { namespace: "apps", verb: "get", resource: "secrets" } },
      allowed: false,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const review = await authz.createSubjectAccessReview({ body: { spec: c.spec } });
      expect(review.status?.allowed).toBe(c.allowed);
    });
  }
});
