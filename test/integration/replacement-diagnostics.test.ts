// Diagnostics before a replacement, end to end: the operator against the API test server (pod
// logs from its per-pod buffers, Events, the Eviction API, the ReplicaSet controller), pods as
// real HTTP servers, and an offset clock so windows and retention pass on demand.
import { describe, expect } from "@jest/globals";
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, kubeConfigFor, type Obj } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { itOnTestServer, useBed } from "./support/test-bed.js";

const AFTER_MS = 30_000;
const HPP = "healthprobe.io/v1alpha1";
const WAIT_MS = 20_000;

const bed = useBed();

const core = () => kubeConfigFor(bed.cluster.server).makeApiClient(CoreV1Api);

/** The kubelet's view of a restart: restartCount 1, and the old log becomes the previous container's. */
async function containerRestarted(name: string, before: string[]): Promise<void> {
  bed.cluster.testServer().podLogs.append(bed.cluster.namespace, name, "app", before);
  bed.cluster.testServer().podLogs.restart(bed.cluster.namespace, name, "app");
  const pod: V1Pod = await core().readNamespacedPod({ name, namespace: bed.cluster.namespace });
  pod.status!.containerStatuses = [
    {
      name: "app",
      image: "registry.example/web:1",
      imageID: "",
      ready: true,
      restartCount: 1,
      started: true,
      state: { running: { startedAt: new Date() } },
    },
  ];
  await core().replaceNamespacedPodStatus({ name, namespace: bed.cluster.namespace, body: pod });
}

async function aKubeletEvent(pod: Record<string, any>, reason: string, message: string): Promise<void> {
  await core().createNamespacedEvent({
    namespace: bed.cluster.namespace,
    body: {
      metadata: { name: `${pod.metadata.name}.${reason.toLowerCase()}`, namespace: bed.cluster.namespace },
      involvedObject: {
        apiVersion: "v1",
        kind: "Pod",
        name: pod.metadata.name,
        namespace: bed.cluster.namespace,
        uid: pod.metadata.uid,
      },
      type: "Warning",
      reason,
      message,
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: new Date(),
      lastTimestamp: new Date(),
      count: 4,
    },
  });
}

async function replacedEvents(): Promise<Obj[] | undefined> {
  const events = (await bed.cluster.list("events.k8s.io/v1", "Event", bed.cluster.namespace)).filter(
    (e) => e.reason === "Replaced" && e.regarding.kind === "HealthProbePolicy",
  );
  return events.length > 0 ? events : undefined;
}

function ownedConfigMaps(policyUid: string): Promise<Obj[]> {
  return bed.cluster
    .list("v1", "ConfigMap", bed.cluster.namespace, "healthprobe.io/policy=web")
    .then((cms) =>
      cms.filter((c: Record<string, any>) =>
        c.metadata.ownerReferences?.some((r: { uid: string }) => r.uid === policyUid),
      ),
    );
}

/** A ConfigMap as an earlier replacement would have left it, captured `agoMs` before now. */
function anOldCapture(i: number, policy: Record<string, any>, agoMs: number): Obj {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `web-diag-old-${i}`,
      namespace: bed.cluster.namespace,
      labels: { "healthprobe.io/policy": "web", "healthprobe.io/pod": `old-${i}` },
      annotations: {
        "healthprobe.io/captured-at": new Date(bed.clock.now() - agoMs).toISOString(),
        "healthprobe.io/pod-name": `old-${i}`,
      },
      ownerReferences: [
        { apiVersion: HPP, kind: "HealthProbePolicy", name: "web", uid: policy.metadata.uid, controller: true },
      ],
    },
    data: { summary: "earlier\n" },
  };
}

/** Starts the operator, waits for both pods Healthy, then fails the victim until its replacement is due. */
async function operatorSeesVictimFail(victim: Record<string, any>): Promise<void> {
  await bed.startOperator([], { clock: bed.clock });
  await waitFor(async () => (await queries.policyStatus(bed.cluster))?.healthy === 2, {
    timeoutMs: WAIT_MS,
    what: "both pods Healthy",
  });
  bed.farm.failing(victim.status.podIP);
  const name = victim.metadata.name as string;
  await waitFor(async () => queries.podEntry(await queries.policyStatus(bed.cluster), name)?.replaceAfter, {
    timeoutMs: WAIT_MS,
    what: "the victim Unhealthy",
  });
}

describe("diagnostics before a replacement", () => {
  // Test server only: it fills the pod's log buffers, which the control plane's kubelet stand-in does not serve.
  itOnTestServer(
    "keeps the pod's logs, Events, conditions and probe record in a ConfigMap named in the Replaced Event; retention keeps 20 and then expires them",
    async () => {
      await bed.cluster.create(aService("web", bed.cluster.namespace));
      await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 2));
      const [victim] = (await queries.livePods(bed, 2, { timeoutMs: WAIT_MS })) as Array<Record<string, any>>;
      const victimName = victim!.metadata.name as string;
      const policy: Record<string, any> = await bed.cluster.create(
        aPolicy("web", bed.cluster.namespace, {
          replacement: { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 10, diagnosticsRetention: "2h" },
        }),
      );
      // Twenty earlier captures, one minute apart: the next one makes 21, and the oldest must go.
      for (let i = 0; i < 20; i++) await bed.cluster.create(anOldCapture(i, policy, (i + 1) * 60_000));

      await containerRestarted(victimName, ["before the crash", "panic: out of memory"]);
      bed.cluster.testServer().podLogs.append(
        bed.cluster.namespace,
        victimName,
        "app",
        Array.from({ length: 250 }, (_, i) => `request ${i} failed: database unreachable`),
      );
      await aKubeletEvent(victim!, "BackOff", "Back-off restarting failed container app");
      await operatorSeesVictimFail(victim!);
      bed.clock.advance(AFTER_MS);

      const [replaced] = (await waitFor(replacedEvents, { timeoutMs: WAIT_MS, what: "the Replaced Event" })) as Array<
        Record<string, any>
      >;
      const named = /diagnostics kept in ConfigMap (\S+)$/.exec(replaced!.note)?.[1];
      expect(named).toMatch(new RegExp(`^web-diag-${victimName}-[0-9a-f]{8}$`));
      const cm = (await bed.cluster.get("v1", "ConfigMap", named!))! as Record<string, any>;

      expect(cm.metadata.labels).toMatchObject({ "healthprobe.io/policy": "web", "healthprobe.io/pod": victimName });
      expect(cm.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: "HealthProbePolicy", name: "web", uid: policy.metadata.uid }),
      ]);
      const current = cm.data["logs.app"].trimEnd().split("\n");
      expect(current).toHaveLength(200);
      expect([current[0], current[199]]).toEqual([
        "request 50 failed: database unreachable",
        "request 249 failed: database unreachable",
      ]);
      expect(cm.data["logs.app.previous"]).toBe("before the crash\npanic: out of memory\n");
      expect(cm.data.events).toMatch(/Warning BackOff: Back-off restarting failed container app \(x4\)/);
      // The operator's own Event about the pod is evidence too.
      expect(cm.data.events).toMatch(/Normal Drained: pod .* drained from the Service/);
      expect(JSON.parse(cm.data.conditions).conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: "Ready", status: "True" })]),
      );
      expect(JSON.parse(cm.data.probe)).toMatchObject({
        pod: victimName,
        state: "Unhealthy",
        result: expect.stringMatching(/^HTTP 503/),
      });
      expect(cm.data.summary).toContain(`pod ${victimName} (uid ${victim!.metadata.uid})`);
      expect(queries.evictionsOf(bed.cluster, { pod: victimName, code: 201 })).toHaveLength(1);

      // 21 captures for the policy: the oldest earlier one is deleted, the new one is first in status.
      const st = await waitFor(
        async () => {
          const s = await queries.policyStatus(bed.cluster);
          return s?.diagnostics?.[0]?.configMap === named && s?.diagnostics?.length === 20 ? s : undefined;
        },
        { timeoutMs: WAIT_MS, what: "status.diagnostics listing the new capture first" },
      );
      expect(st.diagnostics[0]).toEqual({ pod: victimName, configMap: named, time: expect.any(String) });
      expect(st.diagnostics.map((d: { configMap: string }) => d.configMap)).not.toContain("web-diag-old-19");
      await waitFor(async () => (await ownedConfigMaps(policy.metadata.uid)).length === 20, {
        timeoutMs: WAIT_MS,
        what: "20 diagnostics ConfigMaps",
      });
      expect(await bed.cluster.get("v1", "ConfigMap", "web-diag-old-19")).toBeUndefined();
      expect(await bed.cluster.get("v1", "ConfigMap", "web-diag-old-18")).toBeDefined();

      // Two hours on, every one has expired: all deleted at their expiry (a requeue, no event needed), and status lists none.
      bed.clock.advance(2 * 3_600_000);
      await waitFor(async () => (await ownedConfigMaps(policy.metadata.uid)).length === 0, {
        timeoutMs: WAIT_MS,
        what: "every expired ConfigMap deleted",
      });
      await waitFor(async () => (await queries.policyStatus(bed.cluster))?.diagnostics === undefined, {
        timeoutMs: WAIT_MS,
        what: "status.diagnostics empty",
      });
    },
    90_000,
  );

  // Test server only: it injects latency into pod reads.
  itOnTestServer(
    "goes on with the eviction when the kubelet is too slow, and says so in a DiagnosticsFailed Warning",
    async () => {
      await bed.cluster.create(aService("web", bed.cluster.namespace));
      await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 2));
      const [victim] = (await queries.livePods(bed, 2, { timeoutMs: WAIT_MS })) as Array<Record<string, any>>;
      const victimName = victim!.metadata.name as string;
      await bed.cluster.create(
        aPolicy("web", bed.cluster.namespace, {
          replacement: { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 10 },
        }),
      );
      await operatorSeesVictimFail(victim!);

      // Reading the pod and its logs (GET pods, GET pods/log) now takes 15 s: far past the capture's deadline.
      bed.cluster.testServer().faults.addLatency(15_000, { verb: "get", resource: "pods" });
      bed.clock.advance(AFTER_MS);

      await waitFor(() => queries.evictionsOf(bed.cluster, { pod: victimName, code: 201 }).length === 1, {
        timeoutMs: WAIT_MS,
        what: "the eviction",
      });
      const failed = await waitFor(
        async () =>
          (await bed.cluster.list("events.k8s.io/v1", "Event", bed.cluster.namespace)).find(
            (e) => e.reason === "DiagnosticsFailed",
          ),
        { timeoutMs: WAIT_MS, what: "DiagnosticsFailed" },
      );
      expect(failed.type).toBe("Warning");
      expect(failed.regarding).toMatchObject({ kind: "HealthProbePolicy", name: "web" });
      expect(failed.note).toMatch(
        new RegExp(
          `^diagnostics of pod ${victimName} incomplete \\(the replacement went on; the rest is in ConfigMap web-diag-${victimName}-[0-9a-f]{8}\\): logs\\.app: timed out after 4s; conditions: timed out after 4s$`,
        ),
      );
      const cm = (
        await bed.cluster.list("v1", "ConfigMap", bed.cluster.namespace, "healthprobe.io/policy=web")
      )[0]! as Record<string, any>;
      expect(cm.data["logs.app"]).toBeUndefined();
      expect(cm.data.events).toContain("Drained");
      expect(cm.data.summary).toContain("not captured: logs.app: timed out after 4s");
      expect(bed.operator.logs.some((l) => l.msg === "diagnostics incomplete" && l.pod === victimName)).toBe(true);
      bed.cluster.testServer().faults.clear();
    },
    90_000,
  );
});
