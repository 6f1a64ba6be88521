import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { startApiServer, type Gvr, type TestApiServer } from "../../hack/apiserver/index.js";
import { ALL_OPTIONAL_ON, kubectl, renderChart, type KubeManifest } from "./helm.js";

const NAMESPACE = "healthprobe-system";

const RESOURCES: Record<string, string> = {
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  ConfigMap: "configmaps",
  CustomResourceDefinition: "customresourcedefinitions",
  Deployment: "deployments",
  Namespace: "namespaces",
  Pod: "pods",
  PodDisruptionBudget: "poddisruptionbudgets",
  PrometheusRule: "prometheusrules",
  Role: "roles",
  RoleBinding: "rolebindings",
  Service: "services",
  ServiceAccount: "serviceaccounts",
  ServiceMonitor: "servicemonitors",
};
const CLUSTER_SCOPED = new Set(["ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Namespace"]);

function gvrOf(d: KubeManifest): Gvr {
  const [group, version] = d.apiVersion.includes("/") ? d.apiVersion.split("/") : ["", d.apiVersion];
  const resource = RESOURCES[d.kind];
  if (!resource) throw new Error(`no resource name known for kind ${d.kind}`);
  return { group: group!, version: version!, resource };
}

/** A minimal CRD for a kind that a cluster with the Prometheus operator serves. */
function monitoringCrd(kind: string, plural: string): KubeManifest {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.monitoring.coreos.com` },
    spec: {
      group: "monitoring.coreos.com",
      scope: "Namespaced",
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          },
        },
      ],
    },
  };
}

const yamlStream = (docs: KubeManifest[]): string => docs.map((d) => stringify(d)).join("---\n");

describe("the rendered chart on the API test server", () => {
  let server: TestApiServer;
  let dir: string;
  let kubeconfigPath: string;
  beforeEach(async () => {
    server = await startApiServer();
    dir = mkdtempSync(join(tmpdir(), "healthprobe-apply-"));
    kubeconfigPath = join(dir, "kubeconfig");
    server.writeKubeconfig(kubeconfigPath);
  });
  afterEach(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // Server-side apply with kubectl's default strict field validation: the server validates and
  // stores the manifests exactly as rendered, with no client-side schema in between.
  const apply = (docs: KubeManifest[]) =>
    kubectl(["apply", "--server-side", "--field-manager=chart-test", "-f", "-"], kubeconfigPath, {
      input: yamlStream(docs),
    });

  it.each([
    { name: "default values", values: [] as string[], extra: [] as string[] },
    { name: "every optional part on", values: ALL_OPTIONAL_ON, extra: [] as string[] },
    { name: "a single watched namespace", values: ["watchNamespace=apps"], extra: ["apps"] },
    { name: "a list of watched namespaces", values: ["rbac.namespaces={shop,payments}"], extra: ["shop", "payments"] },
  ])("is accepted and stored, with $name", async ({ values, extra }) => {
    const docs = renderChart({ values, namespace: NAMESPACE });
    const namespaces = [NAMESPACE, ...extra].map((name) => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    }));
    const crds = [
      ...docs.filter((d) => d.kind === "CustomResourceDefinition"),
      monitoringCrd("ServiceMonitor", "servicemonitors"),
      monitoringCrd("PrometheusRule", "prometheusrules"),
    ];
    // CRDs and namespaces first, as a cluster must serve a kind before objects of it can be applied.
    const first = await apply([...namespaces, ...crds]);
    expect(first.stderr).toBe("");
    const rest = await apply(docs.filter((d) => d.kind !== "CustomResourceDefinition"));
    expect(rest.stderr).toBe("");
    expect(rest.code).toBe(0);
    const missing = docs.filter(
      (d) =>
        !server.store.get(
          gvrOf(d),
          CLUSTER_SCOPED.has(d.kind) ? undefined : (d.metadata.namespace ?? NAMESPACE),
          d.metadata.name,
        ),
    );
    expect(missing.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([]);
    expect(docs.length).toBeGreaterThanOrEqual(10);
  });

  // The API test server checks every kind's metadata; a kind's own rules (a PodDisruptionBudget with
  // both minAvailable and maxUnavailable, say) are kube-apiserver's, which helm meets in the e2e suite there.
  it("refuses a rendered manifest broken the way a template slip would break it (the check above can fail)", async () => {
    const pdb = renderChart({ namespace: NAMESPACE }).find((d) => d.kind === "PodDisruptionBudget")!;
    // `trunc 63` without `trimSuffix "-"`: a label value ending in a dash.
    const labels = { ...(pdb.metadata.labels ?? {}), "app.kubernetes.io/instance": "healthprobe-operator-" };
    const broken = { ...pdb, metadata: { ...pdb.metadata, labels } };
    await apply([{ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }]);
    const r = await apply([broken]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/metadata\.labels: Invalid value: "healthprobe-operator-"/);
  });
});
