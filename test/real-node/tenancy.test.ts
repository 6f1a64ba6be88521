// Tenancy on the real node, one node for both scenarios. Fair slots: namespace t1's probes hang on
// workload pods switched to hang (HANG_PODS pods × HANG_POLICIES policies, each its own path, so
// HANG_PODS × HANG_POLICIES requests, every one holding its slot for the whole capped timeout),
// more than the global limit; namespace t2's verdict on a pod switched to failing must still come
// within failureThreshold × period + one period. Budget shares: t1 spends its share of the
// operator-wide replacement cap and is blocked by name, and t2's replacement goes on. The operator
// runs from source inside the node's network namespace. Runs only with HEALTHPROBE_TEST_NODE=1.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoreV1Api, DiscoveryV1Api, KubeConfig, KubernetesObjectApi, type V1Pod } from "@kubernetes/client-node";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { API_PORT } from "../../hack/control-plane/real-node/components.js";
import { installCrd, type Obj } from "../support/kube-objects.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { waitFor } from "../support/wait-for.js";
import { AUDIT_POLICY, removalsIn } from "./chaos-world.js";
import { postScript, WORKLOAD_IMAGE } from "../support/workload-control.js";

const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
// Skipped unless asked for: it needs root and the node's binaries, and takes minutes.
const suite = enabled ? describe : describe.skip;

const OPERATOR_NS = "healthprobe-system";
const HANG_PODS = 8;
const HANG_POLICIES = 80;
/** Global probe slots: fewer than t1's HANG_PODS × HANG_POLICIES hanging requests, so without a share t1 holds them all. */
const MAX_PROBES = 600;
/** t1's share of the slots: MAX_PROBES - PER_NAMESPACE stay for every other namespace. */
const PER_NAMESPACE = 500;
/** --max-probe-timeout in seconds; t1's policies ask for exactly this, so each probe holds its slot that long. */
const TIMEOUT_CAP_S = 10;
/** Operator-wide replacements per 12 h, and one namespace's share: t1 alone could otherwise take the whole cap. */
const CAP = 3;
const SHARE = 2;
const WAIT_MS = 150_000;

const getScript = (url: string): string => `
fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) })
  .then((r) => r.text()).then((t) => process.stdout.write(t), () => process.exit(1));
`;

const deployment = (namespace: string, name: string, replicas: number): Obj =>
  ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "web",
              image: WORKLOAD_IMAGE,
              imagePullPolicy: "Never",
              ports: [{ name: "http", containerPort: 8080 }],
              env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
            },
          ],
        },
      },
    },
  }) as Obj;

const service = (namespace: string, name: string): Obj =>
  ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: { ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
  }) as Obj;

/** A policy over app=`name` behind Service `name`, probed every second. */
const policy = (namespace: string, name: string, replacement?: object): Obj =>
  ({
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name, namespace },
    spec: {
      serviceName: name,
      selector: { matchLabels: { app: name } },
      probe: { type: "HTTP", port: "http", path: "/healthz", periodSeconds: 1, timeoutSeconds: 1 },
      evaluation: { failureThreshold: 2, successThreshold: 1 },
      drain: { enabled: true, method: "EndpointSlice", maxUnhealthyPercent: 100 },
      ...(replacement ? { replacement } : {}),
    },
  }) as Obj;

/** One of t1's hanging policies: its own path, timeoutSeconds at the cap, nothing drained or replaced. */
const hangPolicy = (i: number): Obj =>
  ({
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name: `hang-${i}`, namespace: "t1" },
    spec: {
      selector: { matchLabels: { app: "hang" } },
      probe: {
        type: "HTTP",
        port: "http",
        path: `/hang-${i}`,
        periodSeconds: TIMEOUT_CAP_S,
        timeoutSeconds: TIMEOUT_CAP_S,
      },
      drain: { enabled: false, method: "ReadinessGate" },
    },
  }) as Obj;

/** The mass-failure breaker off: every sick pod here is due at once, and the budgets are what is tested. */
const REPLACE = { enabled: true, after: "30s", maxPerHour: 10, maxPerDay: 10, pauseAboveUnhealthyPercent: 100 };

suite("tenancy on the real node: fair probe slots and per-namespace replacement shares", () => {
  let node: RealNodeCluster;
  let core: CoreV1Api;
  let discovery: DiscoveryV1Api;
  let objects: KubernetesObjectApi;
  let dir: string;
  let operator: OperatorProcess;
  let metricsPort = 0;
  const results: string[] = [];

  const pods = async (namespace: string, app: string): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items
      .filter((p) => !p.metadata?.deletionTimestamp)
      .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));

  /** Waits for `n` Running pods of app with addresses, and returns them. */
  const running = (namespace: string, app: string, n: number): Promise<V1Pod[]> =>
    waitFor(
      async () => {
        const ps = await pods(namespace, app);
        return ps.length === n && ps.every((p) => p.status?.phase === "Running" && p.status.podIP) && ps;
      },
      {
        timeoutMs: WAIT_MS,
        intervalMs: 250,
        what: `${n} Running pods of ${namespace}/${app} (${node.dir}/kubelet.log)`,
      },
    );

  const control = async (pod: V1Pod, path: string, body: object): Promise<void> => {
    await node.namespace.exec(process.execPath, ["-e", postScript(`http://${pod.status!.podIP}:9901${path}`, body)]);
  };
  const sicken = (pod: V1Pod) => control(pod, "/set", { status: 503, body: "sick", path: "/healthz" });

  const status = async (namespace: string, name: string): Promise<any> =>
    (
      (await objects.read({
        apiVersion: "healthprobe.io/v1alpha1",
        kind: "HealthProbePolicy",
        metadata: { name, namespace },
      })) as Obj
    ).status ?? {};

  /** A pod's state in the policy's status. */
  const stateOf = (s: any, pod: string): string | undefined =>
    (s.pods ?? []).find((p: { name: string }) => p.name === pod)?.state;

  /** healthprobe_probes_in_flight{namespace} from /metrics, read inside the node's namespace. */
  const inFlight = async (namespace: string): Promise<number> => {
    const text = await node.namespace.exec(process.execPath, [
      "-e",
      getScript(`http://127.0.0.1:${metricsPort}/metrics`),
    ]);
    const line = text.split("\n").find((l) => l.startsWith(`healthprobe_probes_in_flight{namespace="${namespace}"}`));
    return line ? Number(line.split(" ").at(-1)) : 0;
  };

  /** Whether the Service's slices hold `pod` as not ready. */
  const drainedInSlice = async (namespace: string, serviceName: string, pod: string): Promise<boolean> => {
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `kubernetes.io/service-name=${serviceName}`,
    });
    return slices.items.some((s) =>
      (s.endpoints ?? []).some((e) => e.targetRef?.name === pod && e.conditions?.ready === false),
    );
  };

  beforeAll(async () => {
    node = await startRealNode({ auditPolicy: AUDIT_POLICY });
    dir = mkdtempSync(join(tmpdir(), "real-node-tenancy-"));
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    core = kc.makeApiClient(CoreV1Api);
    discovery = kc.makeApiClient(DiscoveryV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
    await installCrd(objects);
    for (const name of ["t1", "t2", OPERATOR_NS])
      await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    for (const [ns, name, n] of [
      ["t1", "hang", HANG_PODS],
      ["t2", "web", 3],
      ["t1", "sick", 5],
      ["t2", "spare", 2],
    ] as const) {
      await objects.create(deployment(ns, name, n));
      if (name !== "hang") await objects.create(service(ns, name));
    }
    operator = startOperatorProcess({
      server: {
        writeKubeconfig: (path: string, user?: string) =>
          writeFileSync(path, node.kubeconfig(user).replace(node.url, `https://127.0.0.1:${API_PORT}`), {
            mode: 0o600,
          }),
      },
      dir,
      netns: node.namespace.path,
      flags: [
        "--insecure-diagnostics",
        "--max-concurrent-probes",
        String(MAX_PROBES),
        "--max-probes-in-flight-per-namespace",
        String(PER_NAMESPACE),
        "--max-probe-timeout",
        `${TIMEOUT_CAP_S}s`,
        "--max-replacements-per-12h",
        String(CAP),
        "--max-replacements-per-12h-per-namespace",
        String(SHARE),
      ],
      logFile: join(dir, "operator.log"),
    });
    await operator.started(120_000);
    metricsPort = operator.logs.find((l) => l.msg === "operator started")!.metricsPort as number;
  }, 600_000);

  afterAll(async () => {
    await operator?.stop();
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // Numbers for the README and the report, not assertions.
    console.log(`tenancy on the real node (node up in ${node?.startMs} ms):\n${results.join("\n")}`);
  }, 120_000);

  it("gives t2 its verdict within failureThreshold × period + one period while t1's hanging probes hold its whole share", async () => {
    for (const p of await running("t1", "hang", HANG_PODS)) await control(p, "/set", { status: 200, hang: true });
    for (let i = 0; i < HANG_POLICIES; i++) await objects.create(hangPolicy(i));
    const web = await running("t2", "web", 3);
    await objects.create(policy("t2", "web"));
    const names = web.map((p) => p.metadata!.name!);
    await waitFor(
      async () => {
        const s = await status("t2", "web");
        return names.every((n) => stateOf(s, n) === "Healthy");
      },
      { timeoutMs: WAIT_MS, intervalMs: 250, what: "t2's pods Healthy" },
    );
    // t1's share full: every slot it may hold is held by a hanging probe.
    const held = await waitFor(
      async () => {
        const n = await inFlight("t1");
        return n >= PER_NAMESPACE && n;
      },
      {
        timeoutMs: WAIT_MS,
        intervalMs: 250,
        what: `healthprobe_probes_in_flight{namespace="t1"} >= ${PER_NAMESPACE}`,
      },
    );
    const victim = web[0]!;
    const at = Date.now();
    await sicken(victim);
    let how = "";
    const verdict = await waitFor(
      async () => {
        if (stateOf(await status("t2", "web"), victim.metadata!.name!) === "Unhealthy") how = "status Unhealthy";
        else if (await drainedInSlice("t2", "web", victim.metadata!.name!)) how = "drained from the slice";
        return how !== "" && Date.now();
      },
      { timeoutMs: WAIT_MS, intervalMs: 50, what: `t2's verdict on ${victim.metadata!.name}` },
    );
    const t1After = await inFlight("t1");
    const delay = verdict - at;
    results.push(
      `fair slots (--max-concurrent-probes=${MAX_PROBES}, --max-probes-in-flight-per-namespace=${PER_NAMESPACE}, --max-probe-timeout=${TIMEOUT_CAP_S}s, t1 ${HANG_PODS * HANG_POLICIES} hanging requests): t2's verdict (${how}) ${delay} ms after the pod turned failing (bound 3000 ms: failureThreshold 2 × 1 s + 1 s); probes in flight in t1: ${held} when it turned, ${t1After} at the verdict`,
    );
    expect(held).toBeGreaterThanOrEqual(PER_NAMESPACE);
    expect(t1After).toBeGreaterThanOrEqual(PER_NAMESPACE);
    expect(delay).toBeLessThanOrEqual(3_000);
  }, 300_000);

  it("lets t1 spend its share of the operator-wide cap, blocks it naming the share, and replaces t2's pod", async () => {
    // t1's hanging probes are done with: the sick pods' probes need t1's slots.
    for (let i = 0; i < HANG_POLICIES; i++)
      await objects.delete({
        apiVersion: "healthprobe.io/v1alpha1",
        kind: "HealthProbePolicy",
        metadata: { name: `hang-${i}`, namespace: "t1" },
      });
    // Some pods stay healthy: with none, a policy fails open and replaces nothing on mass evidence.
    const sick = (await running("t1", "sick", 5)).slice(0, 3);
    const spare = (await running("t2", "spare", 2)).slice(0, 1);
    await objects.create(policy("t1", "sick", REPLACE));
    await objects.create(policy("t2", "spare", REPLACE));
    const start = Date.now();
    for (const p of [...sick, ...spare]) await sicken(p);
    const evicted = (ns: string) =>
      removalsIn(node.auditLog!).filter((r) => r.namespace === ns && r.verb === "evict" && r.code === 201);
    const blocked = await waitFor(
      async () => {
        const c = ((await status("t1", "sick")).conditions ?? []).find(
          (x: { type: string; status: string }) => x.type === "ReplacementBlocked" && x.status === "True",
        );
        return evicted("t1").length === SHARE && c?.message?.includes("per-namespace") && c;
      },
      { timeoutMs: WAIT_MS, intervalMs: 250, what: `t1 replaced ${SHARE} and ReplacementBlocked naming its share` },
    );
    const blockedAt = Date.now();
    const t2At = await waitFor(() => evicted("t2").length === 1 && Date.now(), {
      timeoutMs: WAIT_MS,
      intervalMs: 250,
      what: "t2's pod replaced",
    });
    const t1 = evicted("t1").map((r) => r.pod);
    expect(new Set(t1).size).toBe(SHARE);
    expect(t1.every((p) => sick.some((s) => s.metadata!.name === p))).toBe(true);
    expect(evicted("t2").map((r) => r.pod)).toEqual([spare[0]!.metadata!.name]);
    expect(blocked.message).toContain(
      `namespace t1 used its ${SHARE} of the operator-wide ${CAP} replacements per 12h (--max-replacements-per-12h-per-namespace=${SHARE})`,
    );
    expect((await status("t1", "sick")).replacements).toHaveLength(SHARE);
    results.push(
      `budget shares (--max-replacements-per-12h=${CAP}, --max-replacements-per-12h-per-namespace=${SHARE}, replacement after 30 s): t1 replaced ${SHARE} of 3 and blocked (${blocked.reason}: "${blocked.message}") ${blockedAt - start} ms after the pods turned sick; t2's pod replaced ${t2At - start} ms after`,
    );
  }, 300_000);
});
