// The readiness-gate admission webhook on the real node (HEALTHPROBE_TEST_CLUSTER=real-node): helm
// installs the chart with webhook.enabled, the operator's pods make the certificate and set the
// caBundle, and kube-apiserver calls the chart's Service through kube-proxy's rules, as on any
// cluster. Pods a ReadinessGate policy selects in an opted-in namespace get the gate, the real
// kubelet holds them unready until the operator's first successful probe; with every replica
// scaled away pod creation fails open. Elsewhere: webhook.test.ts (the real control plane, where
// the operator runs on the host) or skipped (the test server calls no webhook).
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Pod,
} from "@kubernetes/client-node";
import {
  BACKEND_PORT,
  HEALTH_PATH,
  OPERATOR_NAMESPACE,
  ensureCrd,
  environmentMode,
  settleMs,
  startMs,
  waitExplained,
} from "./environment.js";
import { realNodeEnvironment, type RealNodeEnvironment } from "./real-node-environment.js";

const GATE = "healthprobe.io/ready";
const OPTED_IN = "gated";
const NOT_OPTED_IN = "plain";
const DEPLOYMENT = "healthprobe-healthprobe-operator";
const SETTLE_MS = settleMs();

const gates = (pod: V1Pod): string[] => (pod.spec?.readinessGates ?? []).map((g) => g.conditionType);
const condition = (pod: V1Pod, type: string): string | undefined =>
  pod.status?.conditions?.find((c) => c.type === type)?.status;

(environmentMode() === "real-node" ? describe : describe.skip)(
  "the readiness-gate webhook on the real node, served by the operator's pods",
  () => {
    let env: RealNodeEnvironment;
    let core: CoreV1Api;
    let apps: AppsV1Api;
    let admission: AdmissionregistrationV1Api;
    let custom: CustomObjectsApi;

    const aPod = (name: string, labels: Record<string, string>): V1Pod => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels },
      spec: env.backendPodSpec(),
    });
    const dryRunGates = async (): Promise<string[]> =>
      gates(
        await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("probe", { app: "web" }), dryRun: "All" }),
      );
    const scale = (replicas: number) =>
      apps.patchNamespacedDeploymentScale({
        name: DEPLOYMENT,
        namespace: OPERATOR_NAMESPACE,
        body: [{ op: "replace", path: "/spec/replicas", value: replicas }],
      });

    beforeAll(async () => {
      env = await realNodeEnvironment({
        namespace: OPERATOR_NAMESPACE,
        port: BACKEND_PORT,
        healthPath: HEALTH_PATH,
        helmValues: ["webhook.enabled=true"],
      });
      const kc = new KubeConfig();
      kc.loadFromFile(env.kubeconfigPath);
      core = kc.makeApiClient(CoreV1Api);
      apps = kc.makeApiClient(AppsV1Api);
      admission = kc.makeApiClient(AdmissionregistrationV1Api);
      custom = kc.makeApiClient(CustomObjectsApi);
      await ensureCrd(env.kubeconfigPath);
      for (const [name, labels] of [
        [OPTED_IN, { "healthprobe.io/readiness-gate-inject": "enabled" }],
        [NOT_OPTED_IN, {}],
      ] as const) {
        await core.createNamespace({ body: { metadata: { name, labels } } });
        await custom.createNamespacedCustomObject({
          group: "healthprobe.io",
          version: "v1alpha1",
          namespace: name,
          plural: "healthprobepolicies",
          body: {
            apiVersion: "healthprobe.io/v1alpha1",
            kind: "HealthProbePolicy",
            metadata: { name: "web" },
            spec: {
              selector: { matchLabels: { app: "web" } },
              probe: { port: "http", path: HEALTH_PATH, periodSeconds: 1, timeoutSeconds: 1 },
              drain: { method: "ReadinessGate" },
            },
          },
        });
      }
    }, startMs() + SETTLE_MS);

    afterAll(async () => {
      await env?.stop();
    }, 120_000);

    it(
      "sets the caBundle of the chart's webhook configuration from the operator's pods",
      async () => {
        const configs = await admission.listMutatingWebhookConfiguration({
          labelSelector: "app.kubernetes.io/instance=healthprobe",
        });
        expect(configs.items).toHaveLength(1);
        const name = configs.items[0]!.metadata!.name!;
        const bundle = await waitExplained(
          env,
          async () => (await admission.readMutatingWebhookConfiguration({ name })).webhooks?.[0]?.clientConfig.caBundle,
          `the caBundle of ${name}`,
          SETTLE_MS,
        );
        const secret = await core.readNamespacedSecret({
          name: `${DEPLOYMENT}-webhook-cert`,
          namespace: OPERATOR_NAMESPACE,
        });
        expect(Buffer.from(bundle, "base64").toString("utf8")).toBe(
          Buffer.from(secret.data!["ca.crt"]!, "base64").toString("utf8"),
        );
      },
      SETTLE_MS + 10_000,
    );

    it(
      "adds the gate through the chart's Service to the selected pods of an opted-in namespace, and only to those; the kubelet holds the pod unready until the first good probe",
      async () => {
        await waitExplained(
          env,
          async () => (await dryRunGates()).includes(GATE),
          "a dry-run pod to get the gate",
          SETTLE_MS,
        );
        const gated = await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("web-1", { app: "web" }) });
        expect(gates(gated)).toEqual([GATE]);
        expect(
          gates(await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("api-1", { app: "api" }) })),
        ).toEqual([]);
        expect(
          gates(await core.createNamespacedPod({ namespace: NOT_OPTED_IN, body: aPod("web-1", { app: "web" }) })),
        ).toEqual([]);
        const ready = await waitExplained(
          env,
          async () => {
            const p = await core.readNamespacedPod({ name: "web-1", namespace: OPTED_IN });
            return condition(p, "Ready") === "True" && p;
          },
          "web-1 Ready once its gate is True",
          SETTLE_MS,
        );
        expect(condition(ready, GATE)).toBe("True");
        expect(condition(ready, "ContainersReady")).toBe("True");
      },
      2 * SETTLE_MS + 10_000,
    );

    it(
      "with every replica scaled away, pod creation still succeeds without the gate (failurePolicy Ignore), and the policy reports the pod once the operator is back",
      async () => {
        await scale(0);
        await waitExplained(
          env,
          async () =>
            (
              await core.listNamespacedPod({
                namespace: OPERATOR_NAMESPACE,
                labelSelector: "app.kubernetes.io/name=healthprobe-operator",
              })
            ).items.length === 0,
          "the operator's pods to go",
          SETTLE_MS,
        );
        // The Service has no endpoints now: kube-apiserver's call is refused and the create goes through.
        expect(
          gates(await core.createNamespacedPod({ namespace: OPTED_IN, body: aPod("web-2", { app: "web" }) })),
        ).toEqual([]);
        await scale(2);
        const reported = await waitExplained(
          env,
          async () => {
            const policy = (await custom.getNamespacedCustomObject({
              group: "healthprobe.io",
              version: "v1alpha1",
              namespace: OPTED_IN,
              plural: "healthprobepolicies",
              name: "web",
            })) as {
              status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
            };
            const c = policy.status?.conditions?.find((x) => x.type === "GateMissing");
            return c?.message.includes("web-2") && c;
          },
          "GateMissing naming web-2",
          SETTLE_MS,
        );
        expect(reported).toMatchObject({ status: "True", reason: "PodsWithoutGate" });
        await waitExplained(
          env,
          async () => (await dryRunGates()).includes(GATE),
          "the gate again after the restart",
          SETTLE_MS,
        );
      },
      3 * SETTLE_MS,
    );
  },
);
