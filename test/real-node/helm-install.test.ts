// The operator as a user runs it: its image built from the Dockerfile (make image), imported into
// the real node's containerd, installed by `helm install` with the chart's defaults but for
// shards.enabled=false (two replicas, leader election: what this suite checks), passing `helm
// test`, probing real pods of a Deployment and taking a sick one out of a Service's rotation, as a
// client going through kube-proxy sees it. Runs only with HEALTHPROBE_TEST_NODE=1, like the rest of
// test/real-node.
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  type V1Pod,
} from "@kubernetes/client-node";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { chartDir as CHART } from "../chart/helm.js";
import { buildOperatorImage, chartImage } from "../support/operator-image.js";
import { helmBin, kubectlBin, repoRoot } from "../support/paths.js";
import { waitFor } from "../support/wait-for.js";
import { postScript, WORKLOAD_IMAGE } from "../support/workload-control.js";

const run = promisify(execFile);
const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
const suite = enabled ? describe : describe.skip;

const RELEASE_NS = "healthprobe-system";
const APP_NS = "shop";

/** One of hack/images' images (here busybox, the chart's helmTest.image) built as an OCI archive; returns its path. */
function buildProjectImage(name: string): string {
  const out = spawnSync("npx", ["tsx", join(repoRoot, "hack", "images", "main.ts"), "build", name], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  if (out.status !== 0) throw new Error(`building image ${name} failed (${out.status ?? out.signal}):\n${out.stderr}`);
  return out.stdout.trim().split("\t")[0]!;
}

/** A node script: `count` GETs of `url`, each on a new connection, so kube-proxy picks a pod each time; prints the bodies. */
const clientScript = (url: string, count: number): string => `
const http = require("node:http");
const get = () => new Promise((resolve) => {
  const req = http.get(${JSON.stringify(url)}, { agent: false, timeout: 3000 }, (res) => {
    let body = "";
    res.on("data", (d) => (body += d));
    res.on("end", () => resolve(res.statusCode + " " + body.trim()));
  });
  req.on("timeout", () => req.destroy(new Error("timed out")));
  req.on("error", (err) => resolve("error " + err.message));
});
(async () => {
  const out = [];
  for (let i = 0; i < ${count}; i++) out.push(await get());
  process.stdout.write(JSON.stringify(out));
})();
`;

const manifests = (): string => `
apiVersion: v1
kind: Namespace
metadata: {name: ${APP_NS}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${APP_NS}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      automountServiceAccountToken: false
      containers:
        - name: web
          image: ${WORKLOAD_IMAGE}
          imagePullPolicy: Never
          ports: [{name: http, containerPort: 8080}]
          env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${APP_NS}}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: healthprobe.io/v1alpha1
kind: HealthProbePolicy
metadata: {name: web, namespace: ${APP_NS}}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  probe: {type: HTTP, port: http, path: /healthz, periodSeconds: 1, timeoutSeconds: 1}
  evaluation: {failureThreshold: 2, successThreshold: 1}
  drain: {enabled: true, maxUnhealthyPercent: 50}
  replacement: {enabled: false}
`;

suite("the operator from its own image, installed by helm on the real node", () => {
  let node: RealNodeCluster;
  let scratch: string;
  let kubeconfig: string;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let discovery: DiscoveryV1Api;
  let leases: CoordinationV1Api;
  const image = chartImage();
  const kubectl = (args: string[]) =>
    run(kubectlBin, ["--kubeconfig", kubeconfig, "--cache-dir", join(scratch, "cache"), ...args], { encoding: "utf8" });
  const helm = (args: string[]) =>
    run(helmBin, ["--kubeconfig", kubeconfig, ...args], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH ?? "",
        HOME: scratch,
        HELM_CONFIG_HOME: join(scratch, "helm"),
        HELM_CACHE_HOME: join(scratch, "helm"),
        HELM_DATA_HOME: join(scratch, "helm"),
      },
    });
  /** Requests to the Service's ClusterIP from the node's namespace, through kube-proxy's rules. */
  const throughService = async (count: number): Promise<string[]> => {
    const ip = (await core.readNamespacedService({ name: "web", namespace: APP_NS })).spec!.clusterIP!;
    return JSON.parse(
      await node.namespace.exec(process.execPath, ["-e", clientScript(`http://${ip}/`, count)]),
    ) as string[];
  };
  const webPods = async (): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace: APP_NS, labelSelector: "app=web" })).items;
  const operatorPods = async (): Promise<V1Pod[]> =>
    (
      await core.listNamespacedPod({
        namespace: RELEASE_NS,
        labelSelector: "app.kubernetes.io/name=healthprobe-operator,app.kubernetes.io/component!=test",
      })
    ).items.filter((p) => !p.metadata?.deletionTimestamp);
  const ready = (p: V1Pod): boolean =>
    p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  /** The addresses the operator's slices of Service web mark ready. */
  const readyAddresses = async (): Promise<string[]> => {
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace: APP_NS,
      labelSelector: "kubernetes.io/service-name=web",
    });
    return slices.items
      .flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready).flatMap((e) => e.addresses))
      .sort();
  };
  const setHealth = async (pod: V1Pod, status: number): Promise<void> => {
    await node.namespace.exec(process.execPath, [
      "-e",
      postScript(`http://${pod.status!.podIP}:9901/set`, {
        status,
        body: status === 200 ? "ok" : "sick",
        path: "/healthz",
      }),
    ]);
  };

  beforeAll(async () => {
    const archive = buildOperatorImage(image);
    const testImage = buildProjectImage("busybox");
    node = await startRealNode();
    node.importArchive(archive);
    node.importArchive(testImage);
    scratch = mkdtempSync(join(tmpdir(), "real-node-helm-"));
    kubeconfig = join(scratch, "kubeconfig");
    node.writeKubeconfig(kubeconfig);
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
    discovery = kc.makeApiClient(DiscoveryV1Api);
    leases = kc.makeApiClient(CoordinationV1Api);
  }, 900_000);

  afterAll(async () => {
    await node?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  it("helm install --wait brings up both replicas from the image, Ready, and one of them holds the leader Lease", async () => {
    // The image is on the node already; Never proves the kubelet ran this one and pulled nothing.
    await helm([
      "install",
      "healthprobe-operator",
      CHART,
      "-n",
      RELEASE_NS,
      "--create-namespace",
      "--set",
      "image.pullPolicy=Never",
      "--set",
      "shards.enabled=false",
      "--wait",
      "--timeout",
      "5m",
    ]);
    const pods = await operatorPods();
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(ready(p)).toBe(true);
      expect(p.spec?.containers[0]?.image).toBe(image);
      expect(p.spec?.nodeName).toBe(node.nodeName);
    }
    const holder = await waitFor(
      async () =>
        (
          await leases
            .readNamespacedLease({ name: "healthprobe-operator", namespace: RELEASE_NS })
            .catch(() => undefined)
        )?.spec?.holderIdentity,
      { timeoutMs: 60_000, intervalMs: 500, what: "a leader" },
    );
    // The identity is <pod name>_<random>: a restarted container in the same pod is a new candidate.
    expect(pods.map((p) => p.metadata!.name)).toContain(holder.split("_")[0]);
  }, 420_000);

  it("helm test passes: the chart's test Pod, as uid 65532 on a read-only root, gets /readyz through the Service", async () => {
    const pod = "healthprobe-operator-test-readiness";
    const out = await helm(["test", "healthprobe-operator", "-n", RELEASE_NS, "--timeout", "2m"]).catch(
      async (err: { stdout?: string; message: string }) => {
        // The hook deletes the Pod only when it succeeded: a failed one is read, then deleted so
        // that the uninstall test below does not wait on it.
        const show = (args: string[]) =>
          kubectl(args).then(
            (r) => r.stdout,
            (e: { stderr?: string }) => e.stderr ?? "",
          );
        const logs = await show(["logs", pod, "-n", RELEASE_NS]);
        const state = await show(["get", "pod", pod, "-n", RELEASE_NS, "-o", "jsonpath={.status.containerStatuses}"]);
        await show(["delete", "pod", pod, "-n", RELEASE_NS, "--ignore-not-found"]);
        throw new Error(
          `helm test failed: ${err.message}\n${err.stdout ?? ""}\npod logs:\n${logs}\ncontainer status: ${state}`,
        );
      },
    );
    expect(out.stdout).toMatch(new RegExp(`TEST SUITE:\\s+${pod}[\\s\\S]*Phase:\\s+Succeeded`));
  }, 180_000);

  it("drains a pod whose health check fails from the Service that clients use, and puts it back once it is well", async () => {
    const file = join(scratch, "shop.yaml");
    writeFileSync(file, manifests());
    await kubectl(["apply", "-f", file]);
    await waitFor(
      async () =>
        (await apps.readNamespacedDeployment({ name: "web", namespace: APP_NS })).status?.readyReplicas === 3
          ? true
          : undefined,
      {
        timeoutMs: 180_000,
        intervalMs: 500,
        what: "the Deployment's 3 pods to run",
      },
    );
    const pods = await webPods();
    const ips = pods.map((p) => p.status!.podIP!).sort();
    await waitFor(async () => JSON.stringify(await readyAddresses()) === JSON.stringify(ips), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: "the operator's slices to hold the 3 pods ready",
    });
    const names = new Set(pods.map((p) => `200 ${p.metadata!.name}`));
    await waitFor(async () => new Set(await throughService(30)).size === 3, {
      timeoutMs: 60_000,
      intervalMs: 1_000,
      what: "clients to reach all 3 pods through the ClusterIP",
    });

    const sick = pods[0]!;
    await setHealth(sick, 503);
    await waitFor(async () => !(await readyAddresses()).includes(sick.status!.podIP!), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `${sick.metadata!.name} to be drained`,
    });
    // kube-proxy follows the slices: once its rules are rewritten no client reaches the sick pod.
    const sickAnswer = `200 ${sick.metadata!.name}`;
    await waitFor(async () => !(await throughService(30)).includes(sickAnswer), {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: "kube-proxy to stop sending clients to the drained pod",
    });
    const after = await throughService(60);
    expect(after.filter((a) => !names.has(a))).toEqual([]);
    expect(after).not.toContain(sickAnswer);

    await setHealth(sick, 200);
    await waitFor(async () => (await throughService(30)).includes(sickAnswer), {
      timeoutMs: 60_000,
      intervalMs: 1_000,
      what: "the pod to be back in rotation",
    });
    expect(await readyAddresses()).toEqual(ips);
  }, 420_000);

  it("keeps draining after the leader's pod is deleted: the other replica takes the Lease", async () => {
    const lease = async () =>
      (await leases.readNamespacedLease({ name: "healthprobe-operator", namespace: RELEASE_NS })).spec
        ?.holderIdentity ?? "";
    const leader = (await lease()).split("_")[0]!;
    await core.deleteNamespacedPod({ name: leader, namespace: RELEASE_NS });
    const next = await waitFor(
      async () => {
        const h = (await lease()).split("_")[0]!;
        return h && h !== leader ? h : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: "another replica to take the Lease" },
    );
    expect((await operatorPods()).map((p) => p.metadata!.name)).toContain(next);
    const sick = (await webPods())[1]!;
    await setHealth(sick, 503);
    await waitFor(async () => !(await readyAddresses()).includes(sick.status!.podIP!), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `${sick.metadata!.name} to be drained by the new leader`,
    });
    await setHealth(sick, 200);
    await waitFor(async () => (await readyAddresses()).includes(sick.status!.podIP!), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `${sick.metadata!.name} to be back`,
    });
  }, 300_000);

  it("reports the policy through kubectl get hpp, from the operator running in the pod", async () => {
    const out = await waitFor(
      async () => {
        const { stdout } = await kubectl(["get", "hpp", "web", "-n", APP_NS, "-o", "json"]);
        const status = (JSON.parse(stdout) as { status?: { conditions?: { type: string; status: string }[] } }).status;
        return status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? status : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: "policy web to be Ready" },
    );
    expect(out.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  }, 120_000);

  it("helm uninstall leaves only what the README says it leaves: the CRD, and the leader Lease the operator made", async () => {
    await helm(["uninstall", "healthprobe-operator", "-n", RELEASE_NS, "--wait", "--timeout", "3m"]);
    // Gone, not just terminating: the pods stop within their grace period once the Deployment is deleted.
    const anyPods = async () => (await core.listNamespacedPod({ namespace: RELEASE_NS })).items.length;
    await waitFor(async () => ((await anyPods()) === 0 ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: "the release namespace's pods to go",
    });
    const kinds =
      "all,serviceaccounts,roles,rolebindings,configmaps,secrets,leases,poddisruptionbudgets,networkpolicies";
    const ns = await kubectl(["get", kinds, "-n", RELEASE_NS, "-o", "name"]);
    const cluster = await kubectl([
      "get",
      "clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations",
      "-l",
      "app.kubernetes.io/instance=healthprobe-operator",
      "-o",
      "name",
    ]);
    const left = [...ns.stdout.split("\n"), ...cluster.stdout.split("\n")]
      .filter(Boolean)
      // What every namespace has.
      .filter((n) => n !== "serviceaccount/default" && n !== "configmap/kube-root-ca.crt");
    const { stdout: crds } = await kubectl(["get", "crd", "-o", "name"]);
    expect(crds).toContain("healthprobepolicies.healthprobe.io");
    // The webhook is off by default, so there is no certificate Secret; the ledger ConfigMap comes with the first replacement.
    expect(left).toEqual(["lease.coordination.k8s.io/healthprobe-operator"]);
  }, 300_000);
});
