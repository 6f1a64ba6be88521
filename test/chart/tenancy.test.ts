// The chart's two RBAC modes (every namespace, or rbac.namespaces) and the ClusterRoles it
// aggregates to the built-in admin, edit and view roles, from the real helm's output.
import { describe, it, expect, beforeAll } from "@jest/globals";
import { helm, chartDir, renderChart, setArgs, type KubeManifest } from "./helm.js";
import { rbacRulesFromManifests } from "./rbac.js";
import { parseConfig } from "../../operator/src/runtime/config.js";

const RELEASE_NS = "healthprobe-system";
const FULLNAME = "healthprobe-healthprobe-operator";
/** The kinds the operator watches or writes in the policies' namespaces. */
const NAMESPACED = [
  "configmaps",
  "endpointslices",
  "events",
  "healthprobepolicies",
  "healthprobepolicies/status",
  "pods",
  "pods/eviction",
  "pods/log",
  "pods/status",
  "replicasets",
  "secrets",
  "services",
];

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
const rulesOf = (d: KubeManifest | undefined): Rule[] => (d?.rules as Rule[] | undefined) ?? [];
const named = (docs: KubeManifest[], kind: string, name: string, namespace?: string) =>
  docs.find((d) => d.kind === kind && d.metadata.name === name && d.metadata.namespace === namespace);
const argsOf = (docs: KubeManifest[]): string[] =>
  (
    docs.find((d) => d.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    }
  ).spec.template.spec.containers[0]!.args;

describe("rbac.namespaces", () => {
  let cluster: KubeManifest[];
  let scoped: KubeManifest[];
  beforeAll(() => {
    cluster = renderChart();
    scoped = renderChart({ values: ["rbac.namespaces={shop,payments}"] });
  });

  it("is empty by default: the namespaced rules are in the ClusterRole, bound cluster-wide, and no --namespace is passed", () => {
    const resources = rulesOf(named(cluster, "ClusterRole", FULLNAME)).flatMap((r) => r.resources);
    expect(resources).toEqual(expect.arrayContaining(NAMESPACED));
    expect(cluster.filter((d) => d.kind === "Role").map((d) => d.metadata.namespace)).toEqual([RELEASE_NS]);
    expect(argsOf(cluster).filter((a) => a.startsWith("--namespace"))).toEqual([]);
  });

  it("gives a Role with every namespaced rule, and its RoleBinding, in each listed namespace", () => {
    const clusterWide = rulesOf(named(cluster, "ClusterRole", FULLNAME)).filter((r) =>
      r.resources.some((x) => NAMESPACED.includes(x)),
    );
    for (const ns of ["shop", "payments"]) {
      const role = named(scoped, "Role", `${FULLNAME}-watched`, ns);
      expect(rulesOf(role)).toEqual(clusterWide);
      expect(named(scoped, "RoleBinding", `${FULLNAME}-watched`, ns)).toMatchObject({
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${FULLNAME}-watched` },
        subjects: [{ kind: "ServiceAccount", name: FULLNAME, namespace: RELEASE_NS }],
      });
    }
  });

  it("keeps no namespaced-resource rule in any ClusterRole bound to the operator", () => {
    const clusterRules = rbacRulesFromManifests(scoped, RELEASE_NS).filter((r) => r.scope === "cluster");
    expect(clusterRules.flatMap((r) => r.resources).filter((x) => NAMESPACED.includes(x))).toEqual([]);
    expect(clusterRules.flatMap((r) => r.resources)).toContain("nodes");
  });

  it("grants namespaced kinds in the listed namespaces only, and the Lease and ledger in the release namespace", () => {
    const byNamespace = new Map<string, Set<string>>();
    for (const r of rbacRulesFromManifests(scoped, RELEASE_NS).filter((x) => x.scope === "namespace")) {
      const set = byNamespace.get(r.namespace!) ?? new Set<string>();
      r.resources.forEach((x) => set.add(x));
      byNamespace.set(r.namespace!, set);
    }
    expect([...byNamespace.keys()].sort()).toEqual(["healthprobe-system", "payments", "shop"]);
    expect([...byNamespace.get("shop")!].sort()).toEqual(NAMESPACED);
    expect([...byNamespace.get(RELEASE_NS)!].sort()).toEqual(["configmaps", "leases"]);
  });

  it("passes the list joined to --namespace, which the operator parses as given", () => {
    const flags = argsOf(scoped).filter((a) => a.startsWith("--namespace"));
    expect(flags).toEqual(["--namespace=shop,payments"]);
    const parsed = parseConfig(flags, {});
    expect(parsed.ok && parsed.config.namespaces).toEqual(["shop", "payments"]);
  });

  it("may list the release namespace: its Role for the Lease and ledger and the watched Role are two", () => {
    const docs = renderChart({ values: [`rbac.namespaces={${RELEASE_NS}}`] });
    expect(
      docs
        .filter((d) => d.kind === "Role" && d.metadata.namespace === RELEASE_NS)
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([FULLNAME, `${FULLNAME}-watched`]);
  });

  it("drops the Secret rule from every listed namespace with rbac.secrets=false", () => {
    const docs = renderChart({ values: ["rbac.namespaces={shop,payments}", "rbac.secrets=false"] });
    expect(rbacRulesFromManifests(docs, RELEASE_NS).filter((r) => r.resources.includes("secrets"))).toEqual([]);
  });

  it("still reaches the operator's flag with rbac.create=false, and renders no Role", () => {
    const docs = renderChart({ values: ["rbac.namespaces={shop}", "rbac.create=false"] });
    expect(docs.filter((d) => d.kind === "Role" || d.kind === "RoleBinding")).toEqual([]);
    expect(argsOf(docs)).toContain("--namespace=shop");
  });

  it("takes the deprecated watchNamespace as a list of one", () => {
    const docs = renderChart({ values: ["watchNamespace=apps"] });
    expect(argsOf(docs)).toContain("--namespace=apps");
    expect(named(docs, "Role", `${FULLNAME}-watched`, "apps")).toBeDefined();
  });

  it.each([
    {
      name: "both watchNamespace and rbac.namespaces",
      set: ["watchNamespace=apps", "rbac.namespaces={shop}"],
      says: /watchNamespace is deprecated and replaced by rbac.namespaces: set only rbac.namespaces/,
    },
    {
      name: "a namespace that is not an RFC 1123 label",
      set: ["rbac.namespaces={shop,Pay_ments}"],
      says: /\/rbac\/namespaces\/1.*does not match pattern/,
    },
    {
      name: "a namespace listed twice",
      set: ["rbac.namespaces={shop,shop}"],
      says: /\/rbac\/namespaces.*items at 0 and 1 are equal/,
    },
    {
      name: "a namespace longer than 63 characters",
      set: [`rbac.namespaces={${"a".repeat(64)}}`],
      says: /\/rbac\/namespaces\/0.*maxLength: got 64, want 63/,
    },
  ])("rejects $name, naming the value", ({ set, says }) => {
    const r = helm(["template", "x", chartDir, ...setArgs(set)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(says);
  });
});

describe("the aggregated ClusterRoles", () => {
  let docs: KubeManifest[];
  beforeAll(() => {
    docs = renderChart();
  });

  it("let the built-in admin and edit roles manage HealthProbePolicies, but not write their status", () => {
    const edit = named(docs, "ClusterRole", `${FULLNAME}-edit`)!;
    expect(edit.metadata.labels).toMatchObject({
      "rbac.authorization.k8s.io/aggregate-to-admin": "true",
      "rbac.authorization.k8s.io/aggregate-to-edit": "true",
    });
    expect(edit.metadata.labels?.["rbac.authorization.k8s.io/aggregate-to-view"]).toBeUndefined();
    expect(rulesOf(edit)).toEqual([
      {
        apiGroups: ["healthprobe.io"],
        resources: ["healthprobepolicies"],
        verbs: ["create", "update", "patch", "delete", "get", "list", "watch"],
      },
    ]);
  });

  it("let the built-in view role read HealthProbePolicies and their status", () => {
    const view = named(docs, "ClusterRole", `${FULLNAME}-view`)!;
    expect(view.metadata.labels).toMatchObject({ "rbac.authorization.k8s.io/aggregate-to-view": "true" });
    expect(view.metadata.labels?.["rbac.authorization.k8s.io/aggregate-to-edit"]).toBeUndefined();
    expect(rulesOf(view)).toEqual([
      {
        apiGroups: ["healthprobe.io"],
        resources: ["healthprobepolicies", "healthprobepolicies/status"],
        verbs: ["get", "list", "watch"],
      },
    ]);
  });

  it("are bound to nothing: the operator gains nothing from them", () => {
    const refs = docs
      .filter((d) => d.kind.endsWith("Binding"))
      .map((d) => (d as unknown as { roleRef: { name: string } }).roleRef.name);
    expect(refs).not.toContain(`${FULLNAME}-edit`);
    expect(refs).not.toContain(`${FULLNAME}-view`);
  });

  it.each([["rbac.aggregateRoles=false"], ["rbac.create=false"]])("are left out with %s", (value) => {
    const names = renderChart({ values: [value] })
      .filter((d) => d.kind === "ClusterRole")
      .map((d) => d.metadata.name);
    expect(names).not.toContain(`${FULLNAME}-edit`);
    expect(names).not.toContain(`${FULLNAME}-view`);
  });
});
