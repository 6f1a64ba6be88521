// The operator's own HTTP endpoints against a live cluster: /readyz follows cache sync,
// /metrics is valid Prometheus text whose probe counters move, /debug/targets shows live figures;
// both answer only a caller that TokenReview and SubjectAccessReview let through.
import { beforeAll, describe, expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService } from "./support/cluster.js";
import { itOnTestServer, useBed } from "./support/test-bed.js";
import { servedPods } from "./support/queries.js";
import type { TestOperator } from "./support/operator.js";

const bed = useBed({ per: "file" });
let ips: Map<string, string>;
/** The scraper's token, and a token of a ServiceAccount the reader role is not bound to. */
let scraper: string;
let alice: string;

beforeAll(async () => {
  await bed.cluster.create(aService("web", bed.cluster.namespace));
  ips = await servedPods(bed, ["web-a", "web-b", "web-c"]);
  bed.farm.failing(ips.get("web-c")!);
  await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { failureThreshold: 1 }));
  // A scraper: a ServiceAccount bound to the reader role the chart ships.
  const rbac = "rbac.authorization.k8s.io/v1";
  await bed.cluster.create({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "prometheus", namespace: bed.cluster.namespace },
  });
  await bed.cluster.create({
    apiVersion: rbac,
    kind: "ClusterRole",
    metadata: { name: "healthprobe-metrics-reader" },
    rules: [{ nonResourceURLs: ["/metrics", "/debug/targets"], verbs: ["get"] }],
  });
  await bed.cluster.create({
    apiVersion: rbac,
    kind: "ClusterRoleBinding",
    metadata: { name: "prometheus-healthprobe-metrics-reader" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "healthprobe-metrics-reader" },
    subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: bed.cluster.namespace }],
  });
  await bed.cluster.create({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "alice", namespace: bed.cluster.namespace },
  });
  scraper = await bed.cluster.serviceAccountToken("prometheus");
  alice = await bed.cluster.serviceAccountToken("alice");
});

/** The file's operator: the /readyz test starts it under faults (test server only), or else the first test that needs it. */
async function operator(): Promise<TestOperator> {
  return bed.running ?? (await bed.startOperator());
}

async function get(
  port: number | undefined,
  path: string,
  token: string | undefined = scraper,
): Promise<{ status: number; body: string; type: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: await res.text(), type: res.headers.get("content-type") ?? "" };
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text exposition format (0.0.4), failing on any line that does not
 * fit it, on samples before their family's HELP and TYPE, and on a family declared twice.
 */
function parseExposition(text: string): Sample[] {
  const metricName = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  const labelPair = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
  const value = "(?:[+-]?Inf|NaN|[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)";
  const sampleRe = new RegExp(
    `^(${metricName})(?:\\{((?:${labelPair})(?:,${labelPair})*,?)?\\})? (${value})(?: -?\\d+)?$`,
  );
  const helpRe = new RegExp(`^# HELP (${metricName}) .*$`);
  const typeRe = new RegExp(`^# TYPE (${metricName}) (counter|gauge|histogram|summary|untyped)$`);
  const help = new Set<string>();
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const lines = text.split("\n");
  expect(lines.at(-1)).toBe("");
  for (const [i, line] of lines.entries()) {
    if (line === "") continue;
    const where = `line ${i + 1}: ${JSON.stringify(line)}`;
    let m: RegExpExecArray | null;
    if ((m = helpRe.exec(line))) {
      if (help.has(m[1]!)) throw new Error(`HELP declared twice at ${where}`);
      help.add(m[1]!);
    } else if ((m = typeRe.exec(line))) {
      if (types.has(m[1]!)) throw new Error(`TYPE declared twice at ${where}`);
      types.set(m[1]!, m[2]!);
    } else if (line.startsWith("#")) {
      continue;
    } else if ((m = sampleRe.exec(line))) {
      const name = m[1]!;
      const family = [name, name.replace(/_(bucket|sum|count)$/, "")].find((f) => types.has(f));
      if (!family) throw new Error(`sample before its TYPE at ${where}`);
      if (!help.has(family)) throw new Error(`sample before its HELP at ${where}`);
      if (family !== name && !["histogram", "summary"].includes(types.get(family)!))
        throw new Error(`suffixed sample of a ${types.get(family)} at ${where}`);
      const labels: Record<string, string> = {};
      for (const lm of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1]!] = lm[2]!;
      samples.push({ name, labels, value: Number(m[3]!.replace(/Inf$/, "Infinity")) });
    } else {
      throw new Error(`not Prometheus text at ${where}`);
    }
  }
  return samples;
}

function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}

describe("operator endpoints", () => {
  // Test server only: it makes every list fail with an injected 500.
  itOnTestServer(
    "/readyz is 503 while the caches cannot list and 200 once they sync",
    async () => {
      bed.cluster.testServer().faults.failRate({ rate: 1, verb: "list", code: 500 });
      await bed.startOperator();
      const failedLists = () =>
        requestsBy(bed.cluster.server.requestLog, { user: "operator", verb: "list", succeeded: false }).length;
      // Every cache has tried and failed at least once; until one succeeds the operator is not ready.
      await waitFor(() => failedLists() >= 5, { what: "every cache's first list to fail" });
      const notReady = await get(bed.operator.healthPort, "/readyz");
      expect(notReady.status).toBe(503);
      expect(notReady.body).toMatch(/not synced/);
      expect((await get(bed.operator.healthPort, "/healthz")).status).toBe(200);
      expect(bed.operator.isReady()).toBe(false);

      bed.cluster.testServer().faults.clear();
      await waitFor(async () => (await get(bed.operator.healthPort, "/readyz")).status === 200, {
        timeoutMs: 15_000,
        what: "/readyz 200 after the lists recover",
      });
      expect(bed.operator.isReady()).toBe(true);
    },
    30_000,
  );

  it("/metrics and /debug/targets answer 401 without a token and 403 to a user the reader role is not bound to", async () => {
    const op = await operator();
    for (const [port, path] of [
      [op.metricsPort, "/metrics"],
      [op.healthPort, "/debug/targets"],
    ] as const) {
      expect((await get(port, path, "")).status).toBe(401);
      expect(await get(port, path, alice)).toMatchObject({
        status: 403,
        body: `Authorization denied for user system:serviceaccount:${bed.cluster.namespace}:alice\n`,
      });
    }
  });

  it("/metrics is valid Prometheus text and its probe counters move as probes run", async () => {
    const op = await operator();
    const first = await get(op.metricsPort, "/metrics");
    expect(first.status).toBe(200);
    expect(first.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const before = parseExposition(first.body);
    expect(before.length).toBeGreaterThan(20);

    const after = await waitFor(
      async () => {
        const s = parseExposition((await get(op.metricsPort, "/metrics")).body);
        const okMoved =
          total(s, "healthprobe_probes_total", { policy: "shop/web", result: "success" }) >=
          total(before, "healthprobe_probes_total", { policy: "shop/web", result: "success" }) + 4;
        const failMoved =
          total(s, "healthprobe_probes_total", { policy: "shop/web", result: "failure", class: "http_status" }) >=
          total(before, "healthprobe_probes_total", { policy: "shop/web", result: "failure", class: "http_status" }) +
            2;
        // The drained gauge moves with the reconcile after the failures, a moment after the counters.
        const drained = total(s, "healthprobe_drained_targets", { policy: "shop/web" }) === 1;
        return okMoved && failMoved && drained ? s : undefined;
      },
      { timeoutMs: 15_000, what: "probe counters to move and the failing pod to be drained" },
    );
    // The histogram counts the same probes the counter does.
    expect(total(after, "healthprobe_probe_duration_seconds_count", { policy: "shop/web" })).toBe(
      total(after, "healthprobe_probes_total", { policy: "shop/web" }),
    );
    expect(total(after, "healthprobe_targets", { policy: "shop/web", state: "Unhealthy" })).toBe(1);
    expect(total(after, "healthprobe_targets", { policy: "shop/web", state: "Healthy" })).toBe(2);
    expect(total(after, "healthprobe_drained_targets", { policy: "shop/web" })).toBe(1);
    expect(total(after, "healthprobe_leader")).toBe(1);
  });

  it("/debug/targets shows each pod's live figures, moving with each probe", async () => {
    const op = await operator();
    type Target = {
      policy: string;
      pod: string;
      ip: string;
      state: string;
      lastProbeAt?: string;
      latencyMs?: number;
      result?: string;
      consecutiveSuccesses: number;
      consecutiveFailures: number;
    };
    const read = async () => {
      const res = await get(op.healthPort, "/debug/targets");
      expect(res.type).toMatch(/application\/json/);
      return (JSON.parse(res.body) as { targets: Target[] }).targets;
    };
    const first = await waitFor(
      async () => {
        const t = await read();
        return t.length === 3 && t.every((x) => x.lastProbeAt) ? t : undefined;
      },
      { what: "three probed targets" },
    );
    const byPod = new Map(first.map((t) => [t.pod, t]));
    expect(byPod.get("web-a")).toMatchObject({
      policy: "shop/web",
      ip: ips.get("web-a"),
      state: "Healthy",
      consecutiveFailures: 0,
    });
    expect(byPod.get("web-c")).toMatchObject({
      policy: "shop/web",
      ip: ips.get("web-c"),
      state: "Unhealthy",
      consecutiveSuccesses: 0,
      result: expect.stringMatching(/^HTTP 503/),
    });
    for (const t of first) expect(t.latencyMs).toBeGreaterThanOrEqual(0);

    const later = await waitFor(
      async () => {
        const t = new Map((await read()).map((x) => [x.pod, x]));
        return [...byPod].every(([pod, was]) => Date.parse(t.get(pod)!.lastProbeAt!) > Date.parse(was.lastProbeAt!))
          ? t
          : undefined;
      },
      { timeoutMs: 5_000, what: "every target probed again" },
    );
    expect(later.get("web-a")!.consecutiveSuccesses).toBeGreaterThan(byPod.get("web-a")!.consecutiveSuccesses);
    expect(later.get("web-c")!.consecutiveFailures).toBeGreaterThan(byPod.get("web-c")!.consecutiveFailures);
  });
});
