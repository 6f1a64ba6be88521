// The chart's RBAC against what the operator really calls: one scenario that makes the operator
// use every part of its job (drain, restore, both drain methods, replacement by eviction and by deletion
// with the diagnostics kept before it and deleted by retention, the
// operator-wide ledger, Secret-sourced probe headers, leader election, aggregated Events,
// collecting a deleted policy's slices), then the test server's request log for the operator's
// user is compared with the rules the chart renders: nothing used is missing, nothing granted
// is unused. The operator runs with the admission webhook on (its certificate renewed within the
// scenario), so the check is made twice: against the chart with webhook.enabled, with every call;
// and against the default chart, without the webhook's calls. All of it in both RBAC modes: every
// namespace watched (the namespaced rules in a ClusterRole), and rbac.namespaces listing the
// policies' namespace (the operator started with --namespace, the namespaced rules a Role there),
// both with leader election; and with the chart's default, shards on (its shard Lease and the
// namespace's handover marker instead of the leader Lease).
import { expect, it } from "@jest/globals";
import { LABEL_SHARD_KIND } from "../../operator/src/adapters/shard-lease-store.js";
import { ScaledClock } from "../../operator/src/runtime/testing/scaled-clock.js";
import { requestsBy } from "../../hack/apiserver/index.js";
import { checkRequestsAgainstRbac, EXERCISED_VERBS, rbacRulesFromChart } from "../chart/rbac.js";
import { waitFor } from "../support/wait-for.js";
import type { Obj } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { rbacScenarioObjects } from "./support/rbac-scenario.js";
import { describeOnTestServer, useBed } from "./support/test-bed.js";
import { renderChart } from "../chart/helm.js";

const HPP = "healthprobe.io/v1alpha1";
/** How the chart is installed and the operator started in one RBAC mode, given the policies' namespace. */
const MODES = [
  // Leader election here (the chart's default is shards on, the third mode).
  {
    mode: "every namespace watched",
    shards: false,
    flags: (_ns: string): string[] => ["--leader-elect"],
    values: (_ns: string): string[] => ["shards.enabled=false"],
  },
  {
    mode: "rbac.namespaces",
    shards: false,
    flags: (ns: string) => ["--leader-elect", `--namespace=${ns}`],
    values: (ns: string) => ["shards.enabled=false", `rbac.namespaces={${ns}}`],
  },
  // The chart's defaults: the shard Lease (renewed, retired on stop) and the namespace's handover marker.
  {
    mode: "shards on",
    shards: true,
    flags: (_ns: string) => ["--shards=on"],
    values: (_ns: string): string[] => [],
  },
];

// Test server only: here the operator is an admin user and a token is its user's name. On the real
// control plane test/e2e/rbac-audit.test.ts runs the same scenario as the chart's ServiceAccount,
// checked against kube-apiserver's audit log.
describeOnTestServer.each(MODES)("the chart's RBAC, $mode", ({ flags, values, shards }) => {
  const bed = useBed({
    per: "file",
    dump: async ({ cluster }) => (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status,
  });
  const livePods = (app: string, n: number): Promise<Obj[]> => queries.livePods(bed, n, { app });

  it("grants exactly what the operator uses", async () => {
    const ns = bed.cluster.namespace;
    for (const o of rbacScenarioObjects(ns)) await bed.cluster.create(o);
    const webPods = await livePods("web", 3);
    const apiPods = await livePods("api", 3);
    await livePods("gate", 2);

    // The webhook configuration as the chart installs it; the operator keeps its caBundle.
    const chart = renderChart({ values: ["webhook.enabled=true", ...values(ns)] });
    const webhookConfig = chart.find((d) => d.kind === "MutatingWebhookConfiguration")!;
    await bed.cluster.create(webhookConfig as unknown as Obj);
    const webhookFlags = (
      chart.find((d) => d.kind === "Deployment") as unknown as {
        spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
      }
    ).spec.template.spec.containers[0]!.args.filter(
      (a) => a.startsWith("--webhook") && !a.startsWith("--webhook-bind-address"),
    );

    // Ten virtual seconds per real one: windows of 30 s pass in three, and the webhook's
    // five-minute certificate is renewed after 20 s.
    await bed.startOperator([...flags(ns), "--webhook-bind-address", "127.0.0.1:0", ...webhookFlags], {
      clock: new ScaledClock(10),
      webhookCertificate: { leafLifetimeMs: 300_000, resyncMs: 10_000 },
    });
    await waitFor(async () => (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.healthy === 3, {
      what: "web settled",
    });

    await waitFor(
      async () =>
        (await bed.cluster.list("v1", "Pod", ns, "app=gate")).every((p) =>
          p.status?.conditions?.some(
            (c: { type: string; status: string }) => c.type === "healthprobe.io/ready" && c.status === "True",
          ),
        ),
      { what: "the gated pods admitted" },
    );

    // Drain, restore and drain again: the repeated Event becomes a series (a patch).
    const flapping = webPods[0]!.status.podIP as string;
    bed.farm.failing(flapping);
    await waitFor(async () => (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.drained === 1, {
      what: "a drain",
    });
    bed.farm.healthy(flapping);
    await waitFor(async () => (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.drained === 0, {
      what: "a restore",
    });
    bed.farm.failing(flapping);
    await waitFor(async () => (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.drained === 1, {
      what: "the same pod drained again",
    });

    // Two evictions (the operator-wide ledger ConfigMap is created, then updated) and one deletion.
    bed.farm.failing(webPods[1]!.status.podIP);
    bed.farm.failing(apiPods[0]!.status.podIP);
    // Counted at the API (a ledger entry is charged before its call, so it alone proves nothing).
    const calls = (subresource: string | undefined, verb: string) =>
      requestsBy(bed.cluster.server.requestLog, { user: "operator", resource: "pods", verb }).filter(
        (e) => (e.subresource || undefined) === subresource && e.code < 300,
      ).length;
    await waitFor(() => calls("eviction", "create") >= 2 && calls(undefined, "delete") >= 1, {
      what: "two evictions and a deletion",
    });

    // Diagnostics were kept for the evicted pods (logs, Events, a fresh read of the pod), and retention deletes them.
    const diagnostics = () => bed.cluster.list("v1", "ConfigMap", ns, "healthprobe.io/policy=web");
    await waitFor(async () => (await diagnostics()).length >= 1, { what: "a diagnostics ConfigMap" });
    await waitFor(async () => (await diagnostics()).length === 0, { what: "diagnostics deleted by retention" });

    // A deleted policy's slices are collected.
    await bed.cluster.remove(HPP, "HealthProbePolicy", "api");
    await waitFor(
      async () =>
        (await bed.cluster.list("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=api"))
          .length === 0,
      { what: "api's slices collected" },
    );

    // The webhook's certificate was made, renewed and its caBundle set.
    const webhookCalls = (resource: string, verb: string) =>
      requestsBy(bed.cluster.server.requestLog, { user: "operator", resource, verb }).filter((e) => e.code < 300)
        .length;
    await waitFor(
      () =>
        webhookCalls("secrets", "create") === 1 &&
        webhookCalls("secrets", "update") >= 1 &&
        webhookCalls("mutatingwebhookconfigurations", "update") >= 1,
      {
        what: "the webhook certificate created, renewed and its caBundle set",
      },
    );

    // A scrape of the locked /metrics: the operator reviews the token and the caller's access.
    await bed.cluster.create({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "scraper", namespace: ns },
    });
    const scrape = await fetch(`http://127.0.0.1:${bed.operator.metricsPort}/metrics`, {
      headers: { authorization: `Bearer system:serviceaccount:${ns}:scraper` },
    });
    expect(scrape.status).toBe(403);

    if (shards) {
      // Its shard Lease changed by hand: the next renewal conflicts and reads the Lease afresh.
      const leaseReads = () =>
        requestsBy(bed.cluster.server.requestLog, { user: "operator", resource: "leases", verb: "get" }).length;
      const [member] = await bed.cluster.list(
        "coordination.k8s.io/v1",
        "Lease",
        "healthprobe-system",
        `${LABEL_SHARD_KIND}=member`,
      );
      expect(member).toBeDefined();
      // A merge patch without a resourceVersion: a renewal between the list and the patch must not make it conflict.
      const { name, namespace } = member!.metadata!;
      await bed.cluster.patch({
        apiVersion: member!.apiVersion,
        kind: member!.kind,
        metadata: { name, namespace, annotations: { edited: "by hand" } },
      });
      await waitFor(() => leaseReads() >= 1, { what: "the shard Lease read after a conflicting renewal" });
    }

    await bed.stopOperator(); // flushes pending Event series and releases the Lease

    const used = requestsBy(bed.cluster.server.requestLog, { user: "operator" });
    const withWebhook = checkRequestsAgainstRbac(
      used,
      rbacRulesFromChart({ namespace: "healthprobe-system", values: ["webhook.enabled=true", ...values(ns)] }),
    );
    expect(withWebhook.missing).toEqual([]);
    expect(withWebhook.unused).toEqual([]);
    const certificateSecret = webhookFlags.find((a) => a.startsWith("--webhook-secret-name="))!.split("=")[1];
    const webhookCall = (e: (typeof used)[number]) =>
      e.resource === "mutatingwebhookconfigurations" ||
      (e.resource === "secrets" && (e.verb === "create" || e.name === certificateSecret));
    const check = checkRequestsAgainstRbac(
      used.filter((e) => !webhookCall(e)),
      rbacRulesFromChart({ namespace: "healthprobe-system", values: values(ns) }),
    );
    expect(check.missing).toEqual([]);
    expect(check.unused).toEqual([]);
    // The scenario really exercised the sensitive verbs.
    const verbs = new Set(used.map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""}`));
    for (const v of EXERCISED_VERBS) expect(verbs).toContain(v);
    if (shards)
      for (const v of ["create leases", "get leases", "list leases", "delete leases"]) expect(verbs).toContain(v);
  }, 120_000);
});
