import { describe, it, expect, beforeAll } from "@jest/globals";
import type { RequestLogEntry } from "../../hack/apiserver/index.js";
import { checkRequestsAgainstRbac, rbacRulesFromChart, rbacRulesFromManifests, type RbacRule } from "./rbac.js";

function aRequest(over: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    time: "2026-01-01T00:00:00Z",
    user: "operator",
    verb: "get",
    method: "GET",
    path: "/api/v1/namespaces/default/pods/web-1",
    group: "",
    version: "v1",
    resource: "pods",
    subresource: "",
    namespace: "default",
    name: "web-1",
    code: 200,
    ...over,
  };
}

function aRule(over: Partial<RbacRule> = {}): RbacRule {
  return { apiGroups: [""], resources: ["pods"], verbs: ["get"], scope: "cluster", ...over };
}

describe("checkRequestsAgainstRbac", () => {
  const cases: Array<{
    name: string;
    requests: RequestLogEntry[];
    rules: RbacRule[];
    missing: string[];
    unused: string[];
  }> = [
    {
      name: "a request granted cluster-wide is neither missing nor unused",
      requests: [aRequest()],
      rules: [aRule()],
      missing: [],
      unused: [],
    },
    {
      name: "a request no rule grants is missing",
      requests: [aRequest({ verb: "delete" })],
      rules: [aRule()],
      missing: ["delete pods default/web-1"],
      unused: ["get /pods cluster"],
    },
    {
      name: "a verb granted but never used is unused",
      requests: [aRequest({ verb: "list", name: "" })],
      rules: [aRule({ verbs: ["list", "watch"] })],
      missing: [],
      unused: ["watch /pods cluster"],
    },
    {
      name: "a subresource needs its own grant",
      requests: [aRequest({ verb: "create", subresource: "eviction" })],
      rules: [aRule({ verbs: ["create", "delete"] })],
      missing: ["create pods/eviction default/web-1"],
      unused: ["create /pods cluster", "delete /pods cluster"],
    },
    {
      name: "a subresource grant allows the subresource",
      requests: [aRequest({ verb: "create", subresource: "eviction" })],
      rules: [aRule({ resources: ["pods/eviction"], verbs: ["create"] })],
      missing: [],
      unused: [],
    },
    {
      name: "the API group must match",
      requests: [aRequest({ verb: "create", group: "events.k8s.io", resource: "events", name: "" })],
      rules: [aRule({ resources: ["events"], verbs: ["create"] })],
      missing: ["create events.k8s.io/events default/"],
      unused: ["create /events cluster"],
    },
    {
      name: "a namespace-scoped rule does not allow the same request in another namespace",
      requests: [aRequest({ resource: "configmaps", namespace: "apps", name: "ledger" })],
      rules: [aRule({ resources: ["configmaps"], scope: "namespace", namespace: "healthprobe-system" })],
      missing: ["get configmaps apps/ledger"],
      unused: ["get /configmaps namespace"],
    },
    {
      name: "a namespace-scoped rule does not allow a cluster-wide list",
      requests: [aRequest({ verb: "list", namespace: "", name: "" })],
      rules: [aRule({ verbs: ["list"], scope: "namespace", namespace: "default" })],
      missing: ["list pods /"],
      unused: ["list /pods namespace"],
    },
    {
      name: "resourceNames allow only the named object",
      requests: [aRequest({ group: "coordination.k8s.io", resource: "leases", namespace: "hp", name: "other" })],
      rules: [
        aRule({
          apiGroups: ["coordination.k8s.io"],
          resources: ["leases"],
          resourceNames: ["healthprobe-healthprobe-operator"],
          scope: "namespace",
          namespace: "hp",
        }),
      ],
      missing: ["get coordination.k8s.io/leases hp/other"],
      unused: ["get coordination.k8s.io/leases namespace"],
    },
    {
      name: "resourceNames never allow a create, whose request carries no name",
      requests: [aRequest({ verb: "create", resource: "configmaps", namespace: "hp", name: "" })],
      rules: [
        aRule({
          resources: ["configmaps"],
          verbs: ["create"],
          resourceNames: ["ledger"],
          scope: "namespace",
          namespace: "hp",
        }),
      ],
      missing: ["create configmaps hp/"],
      unused: ["create /configmaps namespace"],
    },
    {
      name: "a failed request still used its grant (authorization comes before the outcome)",
      requests: [aRequest({ resource: "secrets", name: "probe-auth", code: 404 })],
      rules: [aRule({ resources: ["secrets"] })],
      missing: [],
      unused: [],
    },
    {
      name: "discovery and other non-resource requests are ignored",
      requests: [aRequest({ verb: "get", path: "/apis", resource: "", group: "", name: "", namespace: "" })],
      rules: [],
      missing: [],
      unused: [],
    },
  ];

  it.each(cases)("$name", ({ requests, rules, missing, unused }) => {
    const r = checkRequestsAgainstRbac(requests, rules);
    expect(
      r.missing.map((m) => `${m.verb} ${m.group ? `${m.group}/` : ""}${m.resource} ${m.namespace}/${m.name}`),
    ).toEqual(missing);
    expect(r.unused.map((u) => `${u.verb} ${u.apiGroup}/${u.resource} ${u.scope}`)).toEqual(unused);
  });

  it("counts repeated missing requests once, with their number", () => {
    const r = checkRequestsAgainstRbac(
      [aRequest({ verb: "patch" }), aRequest({ verb: "patch" }), aRequest({ verb: "patch", name: "web-2" })],
      [],
    );
    expect(r.missing.map((m) => [m.name, m.count])).toEqual([
      ["web-1", 2],
      ["web-2", 1],
    ]);
  });
});

describe("rbacRulesFromManifests", () => {
  const sa = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "op", namespace: "hp" } };
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "op", namespace: "hp" },
    spec: { template: { spec: { serviceAccountName: "op" } } },
  };
  const clusterRole = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "op" },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
  };
  const subjects = [{ kind: "ServiceAccount", name: "op", namespace: "hp" }];

  it("gives a ClusterRole bound by a RoleBinding the binding's namespace", () => {
    const rb = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "op", namespace: "apps" },
      roleRef: { kind: "ClusterRole", name: "op" },
      subjects,
    };
    expect(rbacRulesFromManifests([sa, deployment, clusterRole, rb], "hp")).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get"], scope: "namespace", namespace: "apps" },
    ]);
  });

  it("leaves out bindings for another subject", () => {
    const crb = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "x" },
      roleRef: { kind: "ClusterRole", name: "op" },
      subjects: [{ kind: "ServiceAccount", name: "someone-else", namespace: "hp" }],
    };
    expect(rbacRulesFromManifests([sa, deployment, clusterRole, crb], "hp")).toEqual([]);
  });

  it("fails on a binding whose role the chart does not render", () => {
    const crb = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "x" },
      roleRef: { kind: "ClusterRole", name: "missing" },
      subjects,
    };
    expect(() => rbacRulesFromManifests([sa, deployment, crb], "hp")).toThrow(/ClusterRole\/missing/);
  });
});

describe("rbacRulesFromChart (the rendered chart)", () => {
  let rules: RbacRule[];
  beforeAll(() => {
    rules = rbacRulesFromChart();
  });

  const grant = (scope: string, group: string, resource: string): string[] =>
    rules
      .filter((r) => r.scope === scope && r.apiGroups.includes(group) && r.resources.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();

  it.each([
    { scope: "cluster", group: "", resource: "pods", verbs: ["delete", "get", "list", "watch"] },
    { scope: "cluster", group: "", resource: "pods/log", verbs: ["get"] },
    { scope: "cluster", group: "", resource: "configmaps", verbs: ["create", "delete", "list", "update", "watch"] },
    { scope: "cluster", group: "", resource: "pods/eviction", verbs: ["create"] },
    { scope: "cluster", group: "", resource: "pods/status", verbs: ["patch"] },
    { scope: "cluster", group: "", resource: "services", verbs: ["list", "watch"] },
    { scope: "cluster", group: "", resource: "nodes", verbs: ["list", "watch"] },
    {
      scope: "cluster",
      group: "discovery.k8s.io",
      resource: "endpointslices",
      verbs: ["create", "delete", "list", "update", "watch"],
    },
    { scope: "cluster", group: "apps", resource: "replicasets", verbs: ["list", "watch"] },
    { scope: "cluster", group: "healthprobe.io", resource: "healthprobepolicies", verbs: ["list", "watch"] },
    { scope: "cluster", group: "healthprobe.io", resource: "healthprobepolicies/status", verbs: ["update"] },
    { scope: "cluster", group: "events.k8s.io", resource: "events", verbs: ["create", "list", "patch"] },
    { scope: "cluster", group: "", resource: "secrets", verbs: ["get"] },
    // The shard Leases and handover markers (shards on by default), listed by label.
    {
      scope: "namespace",
      group: "coordination.k8s.io",
      resource: "leases",
      verbs: ["create", "delete", "get", "list", "update"],
    },
    // The locked /metrics and /debug/targets: who the caller is, and whether they may get the path.
    { scope: "cluster", group: "authentication.k8s.io", resource: "tokenreviews", verbs: ["create"] },
    { scope: "cluster", group: "authorization.k8s.io", resource: "subjectaccessreviews", verbs: ["create"] },
    { scope: "namespace", group: "", resource: "configmaps", verbs: ["create", "get", "update"] },
  ])("grants $resource ($group) exactly $verbs at $scope scope", ({ scope, group, resource, verbs }) => {
    expect(grant(scope, group, resource)).toEqual(verbs);
  });

  it("grants nothing beyond the list above", () => {
    const resources = new Set(rules.flatMap((r) => r.resources));
    expect([...resources].sort()).toEqual([
      "configmaps",
      "endpointslices",
      "events",
      "healthprobepolicies",
      "healthprobepolicies/status",
      "leases",
      "nodes",
      "pods",
      "pods/eviction",
      "pods/log",
      "pods/status",
      "replicasets",
      "secrets",
      "services",
      "subjectaccessreviews",
      "tokenreviews",
    ]);
  });

  it("restricts the leader Lease (shards off) and the ledger ConfigMap by name for every verb but create", () => {
    // The diagnostics ConfigMaps (cluster scope, in the policies' namespaces) have names of their own: no update, no get.
    const named = rbacRulesFromChart({ values: ["shards.enabled=false"] }).filter(
      (r) => r.scope === "namespace" && (r.resources.includes("leases") || r.resources.includes("configmaps")),
    );
    for (const r of named) {
      if (r.verbs.includes("create")) expect(r.resourceNames).toBeUndefined();
      else expect(r.resourceNames).toHaveLength(1);
    }
    expect(named.every((r) => r.namespace === "healthprobe-system")).toBe(true);
  });

  it("drops the Secret grant with rbac.secrets=false", () => {
    expect(rbacRulesFromChart({ values: ["rbac.secrets=false"] }).some((r) => r.resources.includes("secrets"))).toBe(
      false,
    );
  });

  it("grants namespaced kinds only in the watched namespace, and nodes cluster-wide, with watchNamespace", () => {
    const scoped = rbacRulesFromChart({ values: ["watchNamespace=apps"] });
    const cluster = scoped.filter((r) => r.scope === "cluster").flatMap((r) => r.resources);
    expect(cluster.sort()).toEqual(["nodes", "subjectaccessreviews", "tokenreviews"]);
    const pods = scoped.find((r) => r.resources.includes("pods"));
    expect(pods).toMatchObject({ scope: "namespace", namespace: "apps" });
  });

  it("grants nothing with rbac.create=false", () => {
    expect(rbacRulesFromChart({ values: ["rbac.create=false"] })).toEqual([]);
  });

  it("with the webhook, grants its Secret by name (create aside) and its own webhook configuration by name", () => {
    const webhook = rbacRulesFromChart({ values: ["webhook.enabled=true"] });
    const added = webhook.filter((r) => !rules.some((d) => JSON.stringify(d) === JSON.stringify(r)));
    expect(added).toEqual([
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["mutatingwebhookconfigurations"],
        resourceNames: ["healthprobe-healthprobe-operator"],
        verbs: ["get", "update"],
        scope: "cluster",
      },
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["healthprobe-healthprobe-operator-webhook-cert"],
        verbs: ["get", "update"],
        scope: "namespace",
        namespace: "healthprobe-system",
      },
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["create"],
        scope: "namespace",
        namespace: "healthprobe-system",
      },
    ]);
  });

  it("with the webhook and cert-manager, only reads the Secret and leaves the webhook configuration to cert-manager", () => {
    const certManager = rbacRulesFromChart({ values: ["webhook.enabled=true", "webhook.certManager.enabled=true"] });
    const added = certManager.filter((r) => !rules.some((d) => JSON.stringify(d) === JSON.stringify(r)));
    expect(added).toEqual([
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["healthprobe-healthprobe-operator-webhook-cert"],
        verbs: ["get"],
        scope: "namespace",
        namespace: "healthprobe-system",
      },
    ]);
  });
});
