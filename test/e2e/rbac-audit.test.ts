// The chart's RBAC against what the operator really calls, on the real control plane
// (HEALTHPROBE_TEST_CLUSTER=real), with RBAC enforced by kube-apiserver: the counterpart of
// test/integration/rbac.test.ts, which reads the API test server's request log. Here the operator
// runs as the chart's ServiceAccount (rbac-audit-cluster.ts) and kube-apiserver's audit log is read
// instead. One scenario makes the operator use every part of its job: drain, restore and drain again
// (the repeated Event patched as a series), both drain methods (EndpointSlices, and the ReadinessGate
// condition through pods/status), replacement by eviction and by deletion with diagnostics kept
// before it (the pod read fresh, its log and Events) and deleted by retention, the operator-wide
// ledger, a Secret-sourced probe header the Secret allows with healthprobe.io/allowed-policies,
// leader election, a deleted policy's slices collected, the webhook certificate made and renewed
// and its caBundle set, and a scrape of the locked /metrics with a ServiceAccount token (a
// TokenReview and a SubjectAccessReview). Then nothing the operator used is missing from the
// chart's rules, nothing they grant is unused, and kube-apiserver refused nothing (no 403). As in
// the integration test the check is made twice: against the chart with webhook.enabled (as
// installed), with every call; and against the default chart, without the webhook's calls.
// Both RBAC modes, each on a control plane of its own, run at the same time (the suites on the
// real control plane run one after the other, and most of this one is waiting on the real clock):
// every namespace watched, and rbac.namespaces listing the policies' namespace.
// Shards: the chart is rendered with shards.enabled=false, so the operator runs with
// --leader-elect, as in the integration test (the shard Leases' rules are another set, checked by
// the integration tests of shards only).
// On the real clock the replacement window is 30 s and the diagnostics' retention one minute, the
// schema's least; the webhook certificate's lifetime cannot be shortened from the command line, so
// the scenario spoils the Secret's serving certificate and the operator's next pass (at most a
// minute later) makes a new one.
// The API test server enforces no RBAC and has no audit log: skipped there.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RequestLogEntry } from "../../hack/apiserver/index.js";
import { kubectl } from "../chart/helm.js";
import { checkRequestsAgainstRbac, EXERCISED_VERBS, rbacRulesFromChart } from "../chart/rbac.js";
import { readinessOf, type Obj } from "../integration/support/cluster.js";
import { rbacScenarioObjects } from "../integration/support/rbac-scenario.js";
import { waitFor } from "../support/wait-for.js";
import { OPERATOR_NAMESPACE, startAuditedCluster, type AuditedCluster } from "./rbac-audit-cluster.js";

const real = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const HPP = "healthprobe.io/v1alpha1";
const NS = "shop";
const MODES = [
  { mode: "every namespace watched", values: ["shards.enabled=false"] },
  { mode: "rbac.namespaces", values: ["shards.enabled=false", `rbac.namespaces={${NS}}`] },
];
/** Waits on the real clock: a replacement window of 30 s, a minute of retention, a certificate pass a minute apart. */
const LONG = 150_000;

/** The verbs the scenario must have made the operator use, whatever the rules say: the webhook's besides. */
const EXERCISED = [...EXERCISED_VERBS, "create secrets", "update secrets", "update mutatingwebhookconfigurations"];

const describeReal = real ? describe : describe.skip;

type World = AuditedCluster & { what(s: string): string };

async function livePods(w: World, app: string, n: number): Promise<Obj[]> {
  const pods = await waitFor(
    async () => {
      const list = (await w.objects.list("v1", "Pod", NS, `app=${app}`)).filter(
        (p) => !p.metadata?.deletionTimestamp && p.status?.podIP,
      );
      return list.length === n ? list : undefined;
    },
    { timeoutMs: 120_000, what: w.what(`${n} running ${app} pods`) },
  );
  return pods.sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}

const policyStatus = async (w: World, name: string) => (await w.objects.get(HPP, "HealthProbePolicy", name))?.status;

/** Services, ReplicaSets and policies as in the integration test: web (Evict, a Secret header), api (Delete), gate (ReadinessGate). */
async function createWorkloads(w: World): Promise<{ web: Obj[]; api: Obj[] }> {
  for (const o of rbacScenarioObjects(NS)) await w.objects.create(o);
  return { web: await livePods(w, "web", 3), api: await livePods(w, "api", 3) };
}

const fail = (w: World, pod: Obj) => w.cp.podServers.set(pod.status.podIP, { status: 503, body: "unhealthy\n" });
const heal = (w: World, pod: Obj) => w.cp.podServers.set(pod.status.podIP, { status: 200, body: "ok\n" });

/** Successful calls of the operator's: e.g. ("pods", "eviction", "create"). */
const calls = (w: World, resource: string, subresource: string, verb: string, name?: string) =>
  w
    .requests()
    .filter(
      (e) =>
        e.resource === resource &&
        e.subresource === subresource &&
        e.verb === verb &&
        (name === undefined || e.name === name) &&
        e.code < 300,
    ).length;

async function settle(w: World): Promise<void> {
  await waitFor(async () => (await policyStatus(w, "web"))?.healthy === 3, {
    timeoutMs: 90_000,
    what: w.what("web settled"),
  });
  await waitFor(
    async () =>
      (await w.objects.list("v1", "Pod", NS, "app=gate")).every((p) =>
        p.status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === "healthprobe.io/ready" && c.status === "True",
        ),
      ),
    { timeoutMs: 60_000, what: w.what("the gated pods admitted") },
  );
}

/** Drain, restore and drain again: the repeated Event becomes a series (patched when the operator stops). */
async function flap(w: World, pod: Obj): Promise<void> {
  const ready = async () =>
    readinessOf(await w.objects.list("discovery.k8s.io/v1", "EndpointSlice", NS, "kubernetes.io/service-name=web")).get(
      pod.metadata!.name!,
    );
  await fail(w, pod);
  await waitFor(async () => (await ready()) === false, { timeoutMs: 60_000, what: w.what("a drain") });
  await heal(w, pod);
  await waitFor(async () => (await ready()) === true, { timeoutMs: 60_000, what: w.what("a restore") });
  await fail(w, pod);
  await waitFor(async () => (await ready()) === false, { timeoutMs: 60_000, what: w.what("drained again") });
}

/** The webhook certificate Secret made and the caBundle set; then its serving certificate spoilt, for a renewal. */
async function spoilCertificate(w: World): Promise<void> {
  await waitFor(
    () => calls(w, "secrets", "", "create") >= 1 && calls(w, "mutatingwebhookconfigurations", "", "update") >= 1,
    { timeoutMs: 60_000, intervalMs: 1_000, what: w.what("the webhook certificate made and its caBundle set") },
  );
  // Unreadable (a kubernetes.io/tls Secret must keep the key): the operator makes a new one.
  const patch = [{ op: "replace", path: "/data/tls.crt", value: Buffer.from("spoilt\n").toString("base64") }];
  const r = await kubectl(
    ["patch", "secret", w.certificateSecret, "-n", OPERATOR_NAMESPACE, "--type=json", "-p", JSON.stringify(patch)],
    w.admin,
  );
  if (r.code !== 0) throw new Error(`spoiling the serving certificate failed: ${r.stderr}`);
}

/** A scrape of the locked /metrics with a ServiceAccount's token: a TokenReview, then a SubjectAccessReview. */
async function scrape(w: World, metricsPort: number): Promise<number> {
  await w.objects.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "scraper", namespace: NS } });
  const token = await w.token("scraper", NS);
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return res.status;
}

async function replaceAndCollect(w: World, pods: { web: Obj[]; api: Obj[] }): Promise<void> {
  // Two evictions (the operator-wide ledger ConfigMap is created, then updated) and one deletion,
  // counted at the API (a ledger entry is charged before its call, so it alone proves nothing).
  await fail(w, pods.web[1]!);
  await fail(w, pods.api[0]!);
  await waitFor(() => calls(w, "pods", "eviction", "create") >= 2 && calls(w, "pods", "", "delete") >= 1, {
    timeoutMs: LONG,
    intervalMs: 1_000,
    what: w.what("two evictions and a deletion"),
  });
  // A deleted policy's slices are collected.
  await w.objects.remove(HPP, "HealthProbePolicy", "api");
  await waitFor(
    async () =>
      (await w.objects.list("discovery.k8s.io/v1", "EndpointSlice", NS, "kubernetes.io/service-name=api")).length === 0,
    { timeoutMs: 60_000, what: w.what("api's slices collected") },
  );
  // Diagnostics were kept for the evicted pods, and retention deletes them.
  const diagnostics = () => w.objects.list("v1", "ConfigMap", NS, "healthprobe.io/policy=web");
  await waitFor(async () => (await diagnostics()).length >= 1, {
    timeoutMs: 60_000,
    what: w.what("a diagnostics ConfigMap"),
  });
  await waitFor(async () => (await diagnostics()).length === 0, {
    timeoutMs: LONG,
    intervalMs: 1_000,
    what: w.what("diagnostics deleted by retention"),
  });
}

/** Runs the scenario on a fresh control plane; returns the operator's requests once it stopped. */
async function runScenario(values: string[]): Promise<{ used: RequestLogEntry[]; scraped: number; world: World }> {
  const cluster = await startAuditedCluster({ values, namespace: NS });
  const world: World = Object.assign(cluster, { what: (s: string) => `${s}\n${cluster.output()}` });
  try {
    const pods = await createWorkloads(world);
    const { metricsPort } = await world.startOperator();
    await settle(world);
    await spoilCertificate(world);
    const scraped = await scrape(world, metricsPort);
    await flap(world, pods.web[0]!);
    await replaceAndCollect(world, pods);
    // The serving certificate made again, at the resourceVersion read (an update), by a pass at most a minute on.
    await waitFor(() => calls(world, "secrets", "", "update", world.certificateSecret) >= 1, {
      timeoutMs: LONG,
      intervalMs: 1_000,
      what: world.what("the webhook certificate renewed"),
    });
    await world.stopOperator(); // flushes pending Event series and releases the Lease
    return { used: world.requests(), scraped, world };
  } finally {
    await world.stop();
  }
}

describeReal("the chart's RBAC against kube-apiserver's audit log on the real control plane", () => {
  const runs = new Map<string, ReturnType<typeof runScenario>>();
  // Both modes at once, each on its own control plane: most of the scenario is waiting on the real clock.
  beforeAll(() => {
    for (const { mode, values } of MODES) {
      const run = runScenario(values);
      // Awaited by the mode's test; handled here too, so a failure before that is no unhandled rejection.
      run.catch(() => undefined);
      runs.set(mode, run);
    }
  });
  // A test that timed out leaves its run going: its control plane is stopped before the file ends.
  afterAll(() => Promise.allSettled(runs.values()), 420_000);

  it.each(MODES)(
    "$mode: grants exactly what the operator uses, and refuses it nothing",
    async ({ mode, values }) => {
      const { used, scraped, world } = await runs.get(mode)!;
      expect(scraped).toBe(403);
      const describeRequest = (e: RequestLogEntry) =>
        `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""} ${e.namespace}/${e.name}`;
      expect(used.filter((e) => e.code === 403).map(describeRequest)).toEqual([]);

      const withWebhook = checkRequestsAgainstRbac(
        used,
        rbacRulesFromChart({ namespace: OPERATOR_NAMESPACE, values: world.values }),
      );
      expect(withWebhook.missing).toEqual([]);
      expect(withWebhook.unused).toEqual([]);
      const webhookCall = (e: RequestLogEntry) =>
        e.resource === "mutatingwebhookconfigurations" ||
        (e.resource === "secrets" && (e.verb === "create" || e.name === world.certificateSecret));
      const withoutWebhook = checkRequestsAgainstRbac(
        used.filter((e) => !webhookCall(e)),
        rbacRulesFromChart({ namespace: OPERATOR_NAMESPACE, values }),
      );
      expect(withoutWebhook.missing).toEqual([]);
      expect(withoutWebhook.unused).toEqual([]);
      const verbs = new Set(used.map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""}`));
      for (const v of EXERCISED) expect(verbs).toContain(v);
    },
    420_000,
  );
});
