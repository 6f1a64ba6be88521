// A mutating admission webhook for pod CREATE on the real control plane (HEALTHPROBE_TEST_CLUSTER=real):
// a webhook served over https here (a certificate made with openssl) adds a readiness gate to pods of
// a labelled namespace; an unreachable one is skipped with failurePolicy Ignore and refuses the create
// with Fail. The API test server calls no admission webhook (kube-apiserver is the reference): skipped there.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdmissionregistrationV1Api, CoreV1Api, type V1MutatingWebhook, type V1Pod } from "@kubernetes/client-node";
import { kubeConfigFor } from "../../hack/apiserver/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { clusterKind, startConformanceCluster, type ConformanceCluster } from "./clusters.js";
import { uniqueName } from "./fixtures.js";

const INJECT = "healthprobe.io/readiness-gate-inject";
const GATE = "healthprobe.io/ready";
let cluster: ConformanceCluster;
let core: CoreV1Api;
let admission: AdmissionregistrationV1Api;
let hook: Server;
let hookUrl = "";
let caBundle = "";
let dir = "";
const onRealCluster = clusterKind === "control-plane";

beforeAll(async () => {
  if (!onRealCluster) return;
  dir = mkdtempSync(join(tmpdir(), "webhook-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const cert = readFileSync(join(dir, "cert.pem"));
  caBundle = cert.toString("base64");
  hook = createServer({ cert, key: readFileSync(join(dir, "key.pem")) }, (req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const review = JSON.parse(body);
      const patch = [{ op: "add", path: "/spec/readinessGates", value: [{ conditionType: GATE }] }];
      const response = {
        uid: review.request.uid,
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
      };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}/mutate`;
  cluster = await startConformanceCluster({ bookmarkIntervalMs: 60_000 });
  const kc = kubeConfigFor(cluster, "client-node-user");
  core = kc.makeApiClient(CoreV1Api);
  admission = kc.makeApiClient(AdmissionregistrationV1Api);
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
  await new Promise((r) => hook?.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function aWebhook(name: string, url: string, failurePolicy: "Ignore" | "Fail"): V1MutatingWebhook {
  return {
    name: `${name}.healthprobe.io`,
    clientConfig: { url, caBundle },
    rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
    namespaceSelector: { matchLabels: { [INJECT]: name } },
    failurePolicy,
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds: 5,
  };
}

async function namespace(labels: Record<string, string>): Promise<string> {
  const name = uniqueName("ns");
  await core.createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

type Created = { pod: V1Pod } | { code: number; message: string };

/** Creates a pod; a refusal is returned, not thrown (the real server's missing-ServiceAccount refusal is waited out). */
async function createPod(ns: string): Promise<Created> {
  return waitFor(
    async () => {
      try {
        return {
          pod: await core.createNamespacedPod({
            namespace: ns,
            body: {
              metadata: { name: uniqueName("web"), labels: { app: "web" } },
              spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
            },
          }),
        };
      } catch (err) {
        const e = err as { code?: number; body?: unknown };
        const body = typeof e.body === "string" ? JSON.parse(e.body) : (e.body as { message?: string } | undefined);
        if (e.code === 403 && String(body?.message).includes("serviceaccount")) return undefined;
        return { code: e.code ?? 0, message: String(body?.message ?? "") };
      }
    },
    { what: `a pod create in ${ns}` },
  );
}

const gatesOf = (c: Created) =>
  "pod" in c ? (c.pod.spec?.readinessGates ?? []).map((g) => g.conditionType) : undefined;

(onRealCluster ? describe : describe.skip)("mutating admission webhook", () => {
  it("adds the gate to pods of a selected namespace, skips an unreachable Ignore webhook before it, and leaves other namespaces alone", async () => {
    // Configurations are called in name order: the unreachable one first.
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: "a-down" }, webhooks: [aWebhook("inject", "https://127.0.0.1:1/mutate", "Ignore")] },
    });
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: "b-inject" }, webhooks: [aWebhook("inject", hookUrl, "Ignore")] },
    });
    const ns = await namespace({ [INJECT]: "inject" });
    // The real server picks a new configuration up within a moment.
    const created = await waitFor(
      async () => {
        const c = await createPod(ns);
        return gatesOf(c)?.length ? c : undefined;
      },
      { what: "a pod created with the gate" },
    );
    expect(gatesOf(created)).toEqual([GATE]);
    expect(gatesOf(await createPod(await namespace({})))).toEqual([]);
  }, 120_000);

  it("refuses the create when a Fail webhook cannot be reached", async () => {
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: "c-fail" }, webhooks: [aWebhook("fail", "https://127.0.0.1:1/mutate", "Fail")] },
    });
    const ns = await namespace({ [INJECT]: "fail" });
    const refused = await waitFor(
      async () => {
        const c = await createPod(ns);
        return "code" in c ? c : undefined;
      },
      { what: "the create refused" },
    );
    expect(refused.code).toBe(500);
    expect(refused.message).toMatch(
      /^Internal error occurred: failed calling webhook "fail\.healthprobe\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/mutate\?timeout=5s": /,
    );
  }, 120_000);
});
