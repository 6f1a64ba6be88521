// Secrets opt in, end to end through a kubeconfig only: a policy whose header Secret does not name
// it in healthprobe.io/allowed-policies is Ready=False, SecretNotPermitted, and the pod never sees
// the value; `kubectl annotate` heals it and the value arrives. Needs to see the pod's request
// headers: the test server's and the real control plane's pod servers and the real node's workload
// pods record them, a cluster's busybox does not (skipped there).
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import {
  BACKEND_PORT,
  HEALTH_PATH,
  ensureCrd,
  kubectl,
  settleMs,
  startEnvironment,
  startMs,
  waitExplained,
  type BackendPod,
  type E2eEnvironment,
} from "./environment.js";

const NAME = "web";
const TOKEN = "Bearer e2e-s3cret";
const SETTLE_MS = settleMs();
const describeHere = process.env.KUBECONFIG ? describe.skip : describe;

describeHere("Secrets opt in end to end", () => {
  let env: E2eEnvironment;
  let namespace: string;
  let core: CoreV1Api;
  let pod: BackendPod;

  const apply = (obj: object) =>
    kubectl(
      env.kubeconfigPath,
      ["apply", "--server-side", "--field-manager=healthprobe-e2e", "-f", "-"],
      stringify(obj),
    );
  const settle = <T>(probe: () => Promise<T | undefined | false>, what: string): Promise<T> =>
    waitExplained(env, probe, what, SETTLE_MS);
  const ready = async () => {
    const hpp = JSON.parse(await kubectl(env.kubeconfigPath, ["get", "hpp", NAME, "-n", namespace, "-o", "json"]));
    return (
      hpp.status?.conditions as Array<{ type: string; status: string; reason: string; message: string }> | undefined
    )?.find((c) => c.type === "Ready");
  };

  beforeAll(async () => {
    env = await startEnvironment();
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    namespace = `hp-secret-${Math.random().toString(36).slice(2, 8)}`;
    await ensureCrd(env.kubeconfigPath);
    await apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "probe-auth", namespace },
      data: { token: Buffer.from(TOKEN).toString("base64") },
    });
    await apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: NAME, namespace },
      spec: { ports: [{ name: "http", port: 80, targetPort: BACKEND_PORT, protocol: "TCP" }] },
    });
    await apply({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: NAME, namespace },
      spec: {
        serviceName: NAME,
        selector: { matchLabels: { app: NAME } },
        probe: {
          port: BACKEND_PORT,
          path: HEALTH_PATH,
          periodSeconds: 1,
          timeoutSeconds: 1,
          headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
        },
        replacement: { enabled: false },
      },
    });
    await apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${NAME}-0`, namespace, labels: { app: NAME } },
      spec: env.backendPodSpec(),
    });
    pod = await settle(async () => {
      const p = await core.readNamespacedPod({ name: `${NAME}-0`, namespace });
      return (
        p.status?.podIP !== undefined &&
        p.status.phase === "Running" && { name: `${NAME}-0`, namespace, ip: p.status.podIP }
      );
    }, "a running pod");
    await env.serve([pod]);
  }, startMs() + SETTLE_MS);

  afterAll(async () => {
    await env?.stop();
  }, 120_000);

  it(
    "refuses the Secret until it names the policy: SecretNotPermitted and no value sent, then Ready and the value at the pod",
    async () => {
      const refused = await settle(async () => {
        const c = await ready();
        return c?.reason === "SecretNotPermitted" && c;
      }, "Ready=False, SecretNotPermitted");
      expect(refused.status).toBe("False");
      expect(refused.message).toContain(`kubectl annotate secret probe-auth healthprobe.io/allowed-policies=${NAME}`);
      expect(await env.sawHeaderValue!(pod, TOKEN)).toBe(false);

      await kubectl(env.kubeconfigPath, [
        "annotate",
        "secret",
        "probe-auth",
        "-n",
        namespace,
        `healthprobe.io/allowed-policies=${NAME}`,
      ]);
      await settle(async () => (await ready())?.reason === "Reconciled", "Ready=True once the Secret names the policy");
      await settle(() => env.sawHeaderValue!(pod, TOKEN), "the Secret's value at the pod");
    },
    3 * SETTLE_MS,
  );
});
