// The readiness-gate admission webhook on the real control plane (HEALTHPROBE_TEST_CLUSTER=real):
// helm installs the chart with webhook.enabled (no operator replicas: nothing here runs its image),
// the operator runs on this host as the chart's ServiceAccount with the chart's webhook flags, makes
// its certificate and sets the caBundle of the chart's webhook configuration. kube-apiserver cannot
// reach the chart's Service (no kube-proxy here), so the test points the webhook at the operator by
// URL, on the host's address of the control plane's pod network, keeping the operator's caBundle.
// Then kube-apiserver really calls the operator when pods are created.
// The API test server calls no admission webhook (hack/apiserver/semantics.md): skipped there.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Pod,
} from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import { freePort } from "../../hack/control-plane/processes.js";
import { installChartWithoutReplicas, renderChart } from "../chart/helm.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import { kubectl } from "./environment.js";
import type { AuditEvent } from "../../hack/control-plane/audit.js";

const real = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const RELEASE = "healthprobe";
const OPERATOR_NAMESPACE = "healthprobe-system";
const SERVICE_ACCOUNT = `${RELEASE}-healthprobe-operator`;
const GATE = "healthprobe.io/ready";
const OPTED_IN = "gated";
const NOT_OPTED_IN = "plain";

const aPod = (name: string, labels: Record<string, string>): V1Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels },
  spec: {
    containers: [{ name: "web", image: "busybox:1.36", ports: [{ name: "http", containerPort: 8080 }] }],
    terminationGracePeriodSeconds: 0,
  },
});

const gates = (pod: V1Pod): string[] => (pod.spec?.readinessGates ?? []).map((g) => g.conditionType);

/** Pod creates in the opted-in namespace, at Metadata level: enough for the webhooks' audit annotations. */
const AUDIT_POLICY = {
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived"],
  rules: [
    { level: "Metadata", verbs: ["create"], resources: [{ group: "", resources: ["pods"] }], namespaces: [OPTED_IN] },
    { level: "None" },
  ],
};
/** kube-apiserver's audit annotation when a mutating webhook's call failed and its failurePolicy let the request through. */
const FAILED_OPEN = "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0";

(real ? describe : describe.skip)("the readiness-gate webhook on the real control plane", () => {
  let cp: ControlPlane;
  let dir: string;
  let admin: string;
  let core: CoreV1Api;
  let admission: AdmissionregistrationV1Api;
  let operator: OperatorProcess | undefined;
  let webhookPort: number;
  let configName: string;
  let operatorFlags: string[];
  let token: string;

  const startOperator = async (): Promise<OperatorProcess> => {
    const op = startOperatorProcess({
      server: {
        writeKubeconfig: (path: string) =>
          writeFileSync(
            path,
            cp.tokenKubeconfig(`system:serviceaccount:${OPERATOR_NAMESPACE}:${SERVICE_ACCOUNT}`, token),
            { mode: 0o600 },
          ),
      },
      dir,
      user: "operator",
      flags: operatorFlags,
    });
    await op.started(90_000);
    return op;
  };
  const output = () => operator?.output.join("").split("\n").slice(-40).join("\n") ?? "";

  beforeAll(async () => {
    cp = await startControlPlane({ auditPolicy: AUDIT_POLICY });
    dir = mkdtempSync(join(tmpdir(), "healthprobe-webhook-e2e-"));
    admin = join(dir, "admin.kubeconfig");
    cp.writeKubeconfig(admin);
    const kc = new KubeConfig();
    kc.loadFromString(cp.kubeconfig("admin"));
    core = kc.makeApiClient(CoreV1Api);
    admission = kc.makeApiClient(AdmissionregistrationV1Api);

    await installChartWithoutReplicas({
      kubeconfig: admin,
      namespace: OPERATOR_NAMESPACE,
      releaseName: RELEASE,
      values: ["webhook.enabled=true"],
    });
    // The chart's own flags for the operator, as its Deployment passes them.
    const rendered = renderChart({
      values: ["webhook.enabled=true"],
      namespace: OPERATOR_NAMESPACE,
      releaseName: RELEASE,
    });
    const deployment = rendered.find((d) => d.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    };
    const chartArgs = deployment.spec.template.spec.containers[0]!.args;
    configName = rendered.find((d) => d.kind === "MutatingWebhookConfiguration")!.metadata.name;
    webhookPort = await freePort();
    operatorFlags = [
      ...chartArgs.filter(
        (a) =>
          /^--(leader-elect|leader-election-id|ledger-configmap-name|webhook-)/.test(a) &&
          !a.startsWith("--webhook-bind-address"),
      ),
      // On the host's address of the pod network, which kube-apiserver reaches; the certificate names it too.
      `--webhook-bind-address=${cp.network.hostIp}:${webhookPort}`,
      `--webhook-extra-sans=${cp.network.hostIp}`,
      "--log-level=debug",
    ];
    token = (
      await kubectl(admin, ["create", "token", SERVICE_ACCOUNT, "-n", OPERATOR_NAMESPACE, "--duration=24h"])
    ).trim();
    operator = await startOperator();

    for (const [name, labels] of [
      [OPTED_IN, { "healthprobe.io/readiness-gate-inject": "enabled" }],
      [NOT_OPTED_IN, {}],
    ] as const) {
      await core.createNamespace({ body: { metadata: { name, labels } } });
    }
    const custom = kc.makeApiClient(CustomObjectsApi);
    for (const namespace of [OPTED_IN, NOT_OPTED_IN]) {
      await custom.createNamespacedCustomObject({
        group: "healthprobe.io",
        version: "v1alpha1",
        namespace,
        plural: "healthprobepolicies",
        body: {
          apiVersion: "healthprobe.io/v1alpha1",
          kind: "HealthProbePolicy",
          metadata: { name: "web" },
          spec: {
            selector: { matchLabels: { app: "web" } },
            probe: { port: "http", path: "/healthz", periodSeconds: 2, timeoutSeconds: 1 },
            drain: { method: "ReadinessGate" },
          },
        },
      });
    }
  }, 300_000);

  afterAll(async () => {
    await operator?.stop();
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("installs with webhook.enabled: the configuration gets the operator's caBundle once the operator runs", async () => {
    const bundle = await waitFor(
      async () =>
        (await admission.readMutatingWebhookConfiguration({ name: configName })).webhooks?.[0]?.clientConfig.caBundle,
      {
        timeoutMs: 60_000,
        what: `the caBundle of ${configName}\n${output()}`,
      },
    );
    const secret = await core.readNamespacedSecret({
      name: `${RELEASE}-healthprobe-operator-webhook-cert`,
      namespace: OPERATOR_NAMESPACE,
    });
    expect(Buffer.from(bundle, "base64").toString("utf8")).toBe(
      Buffer.from(secret.data!["ca.crt"]!, "base64").toString("utf8"),
    );
    const config = await admission.readMutatingWebhookConfiguration({ name: configName });
    expect(config.webhooks?.[0]).toMatchObject({
      failurePolicy: "Ignore",
      sideEffects: "None",
      namespaceSelector: { matchLabels: { "healthprobe.io/readiness-gate-inject": "enabled" } },
    });
  });

  it("adds the gate to pods a ReadinessGate policy selects in an opted-in namespace, and only to those", async () => {
    // kube-apiserver reaches the operator by URL here (the chart's Service needs kube-proxy), with the operator's caBundle.
    const caBundle = (await admission.readMutatingWebhookConfiguration({ name: configName })).webhooks![0]!.clientConfig
      .caBundle!;
    await kubectl(admin, [
      "patch",
      "mutatingwebhookconfiguration",
      configName,
      "--type=json",
      "-p",
      JSON.stringify([
        {
          op: "replace",
          path: "/webhooks/0/clientConfig",
          value: { url: `https://${cp.network.hostIp}:${webhookPort}/mutate-pods`, caBundle },
        },
      ]),
    ]);
    // Once the operator's policy cache has the policy (a server-side dry run calls the webhook: sideEffects None).
    await waitFor(
      async () =>
        gates(
          await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("probe", { app: "web" }), dryRun: "All" }),
        ).includes(GATE),
      {
        timeoutMs: 60_000,
        what: `a dry-run pod to get the gate\n${output()}`,
      },
    );

    const gated = await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("web-1", { app: "web" }) });
    expect(gates(gated)).toEqual([GATE]);
    const kept = await core.createNamespacedPod({
      namespace: OPTED_IN,
      body: {
        ...aPod("web-2", { app: "web" }),
        spec: { ...aPod("", {}).spec!, readinessGates: [{ conditionType: "example.com/lb" }] },
      },
    });
    expect(gates(kept)).toEqual(["example.com/lb", GATE]);
    const other = await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("api-1", { app: "api" }) });
    expect(gates(other)).toEqual([]);
    const plain = await core.createNamespacedPod({ namespace: NOT_OPTED_IN, body: aPod("web-1", { app: "web" }) });
    expect(gates(plain)).toEqual([]);
    const handled = operator!.logs.filter((l) => l.msg === "pod admission" && l.inject === true).length;
    expect(handled).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("with the operator stopped, pod creation still succeeds, without the gate (failurePolicy Ignore)", async () => {
    await operator!.stop();
    operator = undefined;
    const pod = await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("web-3", { app: "web" }) });
    expect(gates(pod)).toEqual([]);
    // kube-apiserver did call the webhook, and let the create through because the call failed.
    const webhook = (await admission.readMutatingWebhookConfiguration({ name: configName })).webhooks![0]!.name;
    const created = await waitFor(
      () =>
        readFileSync(cp.auditLog!, "utf8")
          .split("\n")
          .filter((line) => line)
          .map((line) => JSON.parse(line) as AuditEvent)
          .find(
            (e) =>
              e.stage === "ResponseComplete" &&
              e.verb === "create" &&
              e.objectRef?.namespace === OPTED_IN &&
              e.objectRef?.name === "web-3",
          ),
      { timeoutMs: 30_000, what: "the audit event of web-3's create" },
    );
    expect(created.annotations?.[FAILED_OPEN]).toBe(webhook);
  }, 60_000);

  it("once the operator is back, adds the gate again, and the policy reports the pod created without it", async () => {
    operator = await startOperator();
    const custom = new KubeConfig();
    custom.loadFromString(cp.kubeconfig("admin"));
    const policies = custom.makeApiClient(CustomObjectsApi);
    const gateMissing = async () => {
      const policy = (await policies.getNamespacedCustomObject({
        group: "healthprobe.io",
        version: "v1alpha1",
        namespace: OPTED_IN,
        plural: "healthprobepolicies",
        name: "web",
      })) as {
        status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
      };
      return policy.status?.conditions?.find((c) => c.type === "GateMissing");
    };
    const reported = await waitFor(
      async () => ((await gateMissing())?.message.includes("web-3") ? gateMissing() : undefined),
      {
        timeoutMs: 60_000,
        what: `GateMissing naming web-3\n${output()}`,
      },
    );
    expect(reported).toMatchObject({ status: "True", reason: "PodsWithoutGate" });
    expect(reported!.message).toMatch(/^1 of 3 selected pods lack readinessGates/);
    await waitFor(
      async () =>
        gates(
          await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("probe", { app: "web" }), dryRun: "All" }),
        ).includes(GATE),
      {
        timeoutMs: 60_000,
        what: `the gate again after the restart\n${output()}`,
      },
    );
    const pod = await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("web-4", { app: "web" }) });
    expect(gates(pod)).toEqual([GATE]);
  }, 120_000);
});
