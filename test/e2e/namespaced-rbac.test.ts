// The chart's namespaced RBAC mode on the real control plane (HEALTHPROBE_TEST_CLUSTER=real):
// helm installs the chart with rbac.namespaces={shop} (no operator replicas: nothing here runs its
// image), the operator runs on this host as the chart's ServiceAccount with the chart's flags
// (--namespace=shop among them), and kube-apiserver enforces the chart's Roles. The operator
// reconciles the policy in shop; the policy elsewhere is left alone, and the ServiceAccount's own
// requests there, or across all namespaces, are refused. The aggregated ClusterRoles, once
// kube-controller-manager aggregates them, give users bound to the built-in edit and view roles
// their access to HealthProbePolicies. The API test server enforces no RBAC: skipped there.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import { chartDeploymentArgs, installChartWithoutReplicas, kubectl } from "../chart/helm.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";

const real = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const RELEASE = "healthprobe";
const OPERATOR_NAMESPACE = "healthprobe-system";
const SERVICE_ACCOUNT = `${RELEASE}-healthprobe-operator`;
const WATCHED = "shop";
const ELSEWHERE = "elsewhere";
const VALUES = [`rbac.namespaces={${WATCHED}}`];
const HPP = { group: "healthprobe.io", version: "v1alpha1", plural: "healthprobepolicies" };

(real ? describe : describe.skip)("the chart's rbac.namespaces on the real control plane", () => {
  let cp: ControlPlane;
  let dir: string;
  let admin: string;
  let asOperator: string;
  let operator: OperatorProcess | undefined;
  let policies: CustomObjectsApi;
  const output = () => operator?.output.join("").split("\n").slice(-40).join("\n") ?? "";
  const policyStatus = async (namespace: string) =>
    (
      (await policies.getNamespacedCustomObject({ ...HPP, namespace, name: "web" })) as {
        status?: { conditions?: Array<{ type: string; status: string }> };
      }
    ).status;

  beforeAll(async () => {
    cp = await startControlPlane();
    dir = mkdtempSync(join(tmpdir(), "healthprobe-namespaced-e2e-"));
    admin = join(dir, "admin.kubeconfig");
    cp.writeKubeconfig(admin);
    const kc = new KubeConfig();
    kc.loadFromString(cp.kubeconfig("admin"));
    const core = kc.makeApiClient(CoreV1Api);
    policies = kc.makeApiClient(CustomObjectsApi);
    // The listed namespace must exist for helm to put the Role there.
    for (const name of [WATCHED, ELSEWHERE]) await core.createNamespace({ body: { metadata: { name } } });

    await installChartWithoutReplicas({
      kubeconfig: admin,
      namespace: OPERATOR_NAMESPACE,
      releaseName: RELEASE,
      values: VALUES,
    });
    // The chart's own flags, as its Deployment passes them (bind addresses aside: the process picks its own).
    const flags = [
      ...chartDeploymentArgs({ values: VALUES, namespace: OPERATOR_NAMESPACE, releaseName: RELEASE }).filter(
        (a) => !/^--(metrics-bind-address|health-probe-bind-address|log-level)=/.test(a),
      ),
      "--log-level=debug",
    ];
    expect(flags).toContain(`--namespace=${WATCHED}`);

    const token = await kubectl(
      ["create", "token", SERVICE_ACCOUNT, "-n", OPERATOR_NAMESPACE, "--duration=24h"],
      admin,
    );
    if (token.code !== 0) throw new Error(`kubectl create token failed: ${token.stderr}`);
    asOperator = join(dir, "operator.kubeconfig");
    const tokenKubeconfig = cp.tokenKubeconfig(
      `system:serviceaccount:${OPERATOR_NAMESPACE}:${SERVICE_ACCOUNT}`,
      token.stdout.trim(),
    );
    writeFileSync(asOperator, tokenKubeconfig, { mode: 0o600 });

    for (const namespace of [WATCHED, ELSEWHERE]) {
      await core.createNamespacedService({
        namespace,
        body: { metadata: { name: "web" }, spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }] } },
      });
      await policies.createNamespacedCustomObject({
        ...HPP,
        namespace,
        body: {
          apiVersion: "healthprobe.io/v1alpha1",
          kind: "HealthProbePolicy",
          metadata: { name: "web" },
          spec: {
            serviceName: "web",
            selector: { matchLabels: { app: "web" } },
            probe: { port: 8080, path: "/healthz" },
          },
        },
      });
    }
    operator = startOperatorProcess({
      server: { writeKubeconfig: (path: string) => writeFileSync(path, tokenKubeconfig, { mode: 0o600 }) },
      dir,
      user: "operator",
      flags,
    });
    await operator.started(90_000);
  }, 300_000);

  afterAll(async () => {
    await operator?.stop();
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("reconciles the policy in the listed namespace with the Roles there", async () => {
    const ready = await waitFor(
      async () => (await policyStatus(WATCHED))?.conditions?.find((c) => c.type === "Ready"),
      { timeoutMs: 60_000, what: `the policy in ${WATCHED} reconciled\n${output()}` },
    );
    expect(ready.status).toBe("True");
    expect(output()).not.toMatch(/forbidden/i);
  }, 90_000);

  it("leaves the policy in another namespace alone, and the ServiceAccount may read nothing there nor across namespaces", async () => {
    // The listed namespace's policy was written: the operator has run a reconcile pass; this one was never in its caches.
    await waitFor(async () => (await policyStatus(WATCHED))?.conditions, {
      timeoutMs: 60_000,
      what: "the watched policy's status",
    });
    expect(await policyStatus(ELSEWHERE)).toBeUndefined();
    const refused: string[] = [];
    const allowed: string[] = [];
    for (const args of [
      ["get", "pods", "-n", ELSEWHERE],
      ["get", "healthprobepolicies", "-n", ELSEWHERE],
      ["get", "secret", "any", "-n", ELSEWHERE],
      ["get", "configmaps", "-n", ELSEWHERE],
      ["get", "endpointslices", "-n", ELSEWHERE],
      ["get", "pods", "--all-namespaces"],
      ["get", "healthprobepolicies", "--all-namespaces"],
    ]) {
      const r = await kubectl(args, asOperator);
      (r.code !== 0 && /forbidden/i.test(r.stderr) ? refused : allowed).push(args.join(" "));
    }
    expect(allowed).toEqual([]);
    expect(refused).toHaveLength(7);
    expect((await kubectl(["get", "pods", "-n", WATCHED], asOperator)).code).toBe(0);
    expect((await kubectl(["get", "nodes"], asOperator)).code).toBe(0);
  }, 90_000);

  it("gives users bound to the built-in edit and view roles their access to HealthProbePolicies (aggregated by kube-controller-manager)", async () => {
    const kc = new KubeConfig();
    kc.loadFromString(cp.kubeconfig("admin"));
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    for (const [user, role] of [
      ["alice", "edit"],
      ["bob", "view"],
    ] as const) {
      await rbac.createNamespacedRoleBinding({
        namespace: WATCHED,
        body: {
          metadata: { name: user },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
        },
      });
    }
    const can = async (user: string, ...args: string[]) =>
      (await kubectl(["auth", "can-i", ...args, "-n", WATCHED, `--as=${user}`], admin)).stdout.trim();
    await waitFor(async () => (await can("alice", "create", "healthprobepolicies")) === "yes", {
      timeoutMs: 60_000,
      what: "edit aggregating the chart's edit role",
    });
    await waitFor(async () => (await can("bob", "list", "healthprobepolicies")) === "yes", {
      timeoutMs: 60_000,
      what: "view aggregating the chart's view role",
    });
    expect({
      aliceDeletes: await can("alice", "delete", "healthprobepolicies"),
      aliceReadsStatus: await can("alice", "get", "healthprobepolicies", "--subresource=status"),
      aliceWritesStatus: await can("alice", "update", "healthprobepolicies", "--subresource=status"),
      bobReadsStatus: await can("bob", "get", "healthprobepolicies", "--subresource=status"),
      bobCreates: await can("bob", "create", "healthprobepolicies"),
      aliceElsewhere: (
        await kubectl(["auth", "can-i", "create", "healthprobepolicies", "-n", ELSEWHERE, "--as=alice"], admin)
      ).stdout.trim(),
    }).toEqual({
      aliceDeletes: "yes",
      aliceReadsStatus: "yes",
      aliceWritesStatus: "no",
      bobReadsStatus: "yes",
      bobCreates: "no",
      aliceElsewhere: "no",
    });
  }, 120_000);
});
