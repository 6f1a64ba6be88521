import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { startApiServer, type TestApiServer } from "./index.js";
import { helmBin } from "../../test/support/paths.js";
import { widgetCrd } from "./crd-fixture.js";

let server: TestApiServer;
let dir: string;

function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      helmBin,
      ["--kubeconfig", join(dir, "kubeconfig"), ...args],
      {
        timeout: 60_000,
        env: {
          ...process.env,
          HOME: dir,
          HELM_CONFIG_HOME: join(dir, "config"),
          HELM_CACHE_HOME: join(dir, "cache"),
          HELM_DATA_HOME: join(dir, "data"),
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as any).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** A typical operator chart: CRD, ServiceAccount, RBAC, Deployment, Service, PDB, ConfigMap. */
function writeChart(root: string): string {
  const chart = join(root, "chart");
  mkdirSync(join(chart, "templates"), { recursive: true });
  mkdirSync(join(chart, "crds"), { recursive: true });
  writeFileSync(
    join(chart, "Chart.yaml"),
    stringify({ apiVersion: "v2", name: "gadget-operator", version: "0.1.0", appVersion: "0.1.0" }),
  );
  writeFileSync(join(chart, "values.yaml"), stringify({ replicas: 1 }));
  writeFileSync(join(chart, "crds", "widgets.yaml"), stringify(widgetCrd));
  const labels = { app: "gadget-operator" };
  const docs = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "gadget-operator" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "gadget-operator" },
      rules: [{ apiGroups: ["example.com"], resources: ["widgets"], verbs: ["*"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "gadget-operator" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "gadget-operator" },
      subjects: [{ kind: "ServiceAccount", name: "gadget-operator", namespace: "default" }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "gadget-operator" },
      rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["*"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "gadget-operator" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "gadget-operator" },
      subjects: [{ kind: "ServiceAccount", name: "gadget-operator" }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "gadget-operator" }, data: { level: "info" } },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "gadget-operator", labels },
      spec: { selector: labels, ports: [{ name: "metrics", port: 8080 }] },
    },
    {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "gadget-operator" },
      spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
    },
  ];
  const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: gadget-operator
  labels: {app: gadget-operator}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: gadget-operator}}
  template:
    metadata: {labels: {app: gadget-operator}}
    spec:
      serviceAccountName: gadget-operator
      containers:
      - name: operator
        image: example.com/gadget-operator:0.1.0
        ports: [{name: metrics, containerPort: 8080}]
`;
  writeFileSync(join(chart, "templates", "resources.yaml"), docs.map((d) => stringify(d)).join("---\n"));
  writeFileSync(join(chart, "templates", "deployment.yaml"), deployment);
  return chart;
}

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  dir = mkdtempSync(join(tmpdir(), "helm-"));
  server.writeKubeconfig(join(dir, "kubeconfig"));
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (group: string, version: string, resource: string, name: string, namespace?: string) =>
  server.store.get({ group, version, resource }, namespace, name);

describe("the real helm", () => {
  it("installs, upgrades, lists and uninstalls a typical operator chart", async () => {
    const chart = writeChart(dir);
    const install = await helm(["install", "gadgets", chart, "--namespace", "default", "--wait=false"]);
    expect(install.stderr.replace(/^level=.*\n/gm, "")).toBe("");
    expect(install.code).toBe(0);
    expect(get("apiextensions.k8s.io", "v1", "customresourcedefinitions", "widgets.example.com")).toBeDefined();
    expect(get("apps", "v1", "deployments", "gadget-operator", "default")!.spec.replicas).toBe(1);
    for (const [g, r, ns] of [
      ["", "serviceaccounts", "default"],
      ["rbac.authorization.k8s.io", "clusterroles", undefined],
      ["rbac.authorization.k8s.io", "clusterrolebindings", undefined],
      ["rbac.authorization.k8s.io", "roles", "default"],
      ["rbac.authorization.k8s.io", "rolebindings", "default"],
      ["", "services", "default"],
      ["policy", "poddisruptionbudgets", "default"],
    ] as const) {
      expect(get(g, "v1", r, "gadget-operator", ns)).toBeDefined();
    }
    const upgrade = await helm(["upgrade", "gadgets", chart, "--set", "replicas=3"]);
    expect(upgrade.code).toBe(0);
    expect(get("apps", "v1", "deployments", "gadget-operator", "default")!.spec.replicas).toBe(3);
    const list = await helm(["list", "-o", "json"]);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ name: "gadgets", revision: "2", status: "deployed" }),
    ]);
    const uninstall = await helm(["uninstall", "gadgets"]);
    expect(uninstall.code).toBe(0);
    expect(get("apps", "v1", "deployments", "gadget-operator", "default")).toBeUndefined();
    expect(
      server.store
        .list({ group: "", version: "v1", resource: "secrets" }, "default")
        .filter((s) => s.type === "helm.sh/release.v1"),
    ).toEqual([]);
    // Helm keeps CRDs on uninstall.
    expect(get("apiextensions.k8s.io", "v1", "customresourcedefinitions", "widgets.example.com")).toBeDefined();
  });
});
