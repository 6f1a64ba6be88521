import { describe, expect, it } from "@jest/globals";
import type { CapturedEvent } from "../domain/diagnostics.js";
import { diagnosticsConfigMapName } from "../domain/diagnostics.js";
import type { DiagnosticsConfigMapBody, PodSnapshot } from "../adapters/diagnostics-api.js";
import { HealthStore } from "../runtime/health-store.js";
import { Diagnostics, type DiagnosticsPort } from "./diagnostics.js";
import type { KubeObject } from "./kube-objects.js";
import { parsePolicy, type ParsedPolicy } from "./parsed-policy.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { NS, aPodObject, aPolicyObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const POD = { name: "web-0", uid: "uid-web-0" };

/** A port whose calls answer as the test says: a value, an error, or never. */
class FakePort implements DiagnosticsPort {
  created: DiagnosticsConfigMapBody[] = [];
  deleted: string[] = [];
  calls = 0;
  logs: (container: string, previous: boolean) => Promise<string> = async (c, previous) =>
    `${c}${previous ? " previous" : ""} line\n`;
  pod: () => Promise<PodSnapshot> = async () => ({
    containers: ["app"],
    restarts: new Map([["app", 1]]),
    status: { conditions: [{ type: "Ready", status: "False" }] },
  });
  events: () => Promise<CapturedEvent[]> = async () => [
    { time: T0, type: "Warning", reason: "BackOff", note: "restarting" },
  ];
  async readPod(_ns: string, _name: string, signal: AbortSignal) {
    this.calls++;
    return race(this.pod(), signal);
  }
  async readLog(_ns: string, _name: string, container: string, opts: { previous: boolean }, signal: AbortSignal) {
    this.calls++;
    return race(this.logs(container, opts.previous), signal);
  }
  async listPodEvents(_ns: string, _uid: string, signal: AbortSignal) {
    this.calls++;
    return race(this.events(), signal);
  }
  async createConfigMap(_ns: string, cm: DiagnosticsConfigMapBody) {
    this.created.push(cm);
    return "created" as const;
  }
  async deleteConfigMap(_ns: string, name: string) {
    this.deleted.push(name);
  }
  describeFailure(err: unknown) {
    return err instanceof Error ? err.message : String(err);
  }
}

function race<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true })),
  ]);
}

function aPolicy(replacement: Record<string, unknown> = {}): ParsedPolicy {
  const parsed = parsePolicy(aPolicyObject("web", { replacement: { enabled: true, after: "30s", ...replacement } }));
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.policy;
}

function setUp(configMaps: KubeObject[] = [], timeoutMs?: number) {
  const port = new FakePort();
  const health = new HealthStore();
  const diagnostics = new Diagnostics({
    api: port,
    configMaps: new MemoryCache(configMaps),
    pods: new MemoryCache([aPodObject("web-0")]),
    health,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  });
  return { port, diagnostics };
}

function aStored(name: string, agoMs: number, policyUid = "uid-web"): KubeObject {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      annotations: {
        "healthprobe.io/captured-at": new Date(T0 - agoMs).toISOString(),
        "healthprobe.io/pod-name": `pod-${name}`,
      },
      ownerReferences: [
        { apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy", name: "web", uid: policyUid },
      ],
    },
  };
}

describe("Diagnostics.capture", () => {
  it("reads the pod, its Events and each container's current and previous log, and stores them in one ConfigMap", async () => {
    const { port, diagnostics } = setUp();
    const out = await diagnostics.capture(quietLogger(), aPolicy(), POD, T0);
    expect(out).toEqual({ configMap: diagnosticsConfigMapName("web", "web-0", "uid-web-0"), problems: [] });
    expect(port.created).toHaveLength(1);
    expect(Object.keys(port.created[0]!.data).sort()).toEqual([
      "conditions",
      "events",
      "logs.app",
      "logs.app.previous",
      "summary",
    ]);
    expect(port.created[0]!.data["logs.app.previous"]).toBe("app previous line\n");
  });

  it("keeps what it could read when a log read fails, and lists the failure", async () => {
    const { port, diagnostics } = setUp();
    port.logs = async (_c, previous) =>
      previous ? Promise.reject(new Error("HTTP 400: previous terminated container not found")) : "now\n";
    const out = await diagnostics.capture(quietLogger(), aPolicy(), POD, T0);
    expect(out?.configMap).toBeDefined();
    expect(out?.problems).toEqual(["logs.app.previous: HTTP 400: previous terminated container not found"]);
    expect(port.created[0]!.data["logs.app"]).toBe("now\n");
  });

  it("gives up on reads that do not answer by the deadline and still stores the rest", async () => {
    const { port, diagnostics } = setUp([], 100);
    port.logs = () => new Promise<string>(() => {});
    const out = await diagnostics.capture(quietLogger(), aPolicy(), POD, T0);
    expect(out?.problems).toEqual(["logs.app: timed out after 80ms", "logs.app.previous: timed out after 80ms"]);
    expect(port.created[0]!.data.events).toContain("BackOff");
  });

  it("names the logs from the cached pod when the pod cannot be read (no previous logs then)", async () => {
    const { port, diagnostics } = setUp();
    port.pod = () => Promise.reject(new Error('HTTP 404: pods "web-0" not found'));
    const out = await diagnostics.capture(quietLogger(), aPolicy(), POD, T0);
    expect(out?.problems).toEqual(['conditions: HTTP 404: pods "web-0" not found']);
    expect(Object.keys(port.created[0]!.data).sort()).toEqual(["events", "logs.app", "summary"]);
  });

  it("reads nothing when the pod's ConfigMap is already there (a retried replacement)", async () => {
    const name = diagnosticsConfigMapName("web", "web-0", "uid-web-0");
    const { port, diagnostics } = setUp([{ metadata: { name, namespace: NS } }]);
    expect(await diagnostics.capture(quietLogger(), aPolicy(), POD, T0)).toEqual({ configMap: name, problems: [] });
    expect(port.calls).toBe(0);
    expect(port.created).toEqual([]);
  });

  it("does nothing with keepDiagnostics false", async () => {
    const { port, diagnostics } = setUp();
    expect(await diagnostics.capture(quietLogger(), aPolicy({ keepDiagnostics: false }), POD, T0)).toBeUndefined();
    expect(port.calls).toBe(0);
  });
});

describe("Diagnostics.retain", () => {
  const H = 3_600_000;
  it("deletes expired ConfigMaps of this policy only, lists the rest and requeues at the next expiry", async () => {
    const { port, diagnostics } = setUp([aStored("a", 25 * H), aStored("b", H), aStored("other", 30 * H, "uid-other")]);
    const out = await diagnostics.retain(quietLogger(), aPolicy(), T0, true);
    expect(port.deleted).toEqual(["a"]);
    expect(out).toEqual({
      diagnostics: [{ pod: "pod-b", configMap: "b", time: "2026-12-01T09:00:00Z" }],
      requeueAt: T0 + 23 * H,
    });
  });

  it("plans but deletes nothing when not the leader", async () => {
    const { port, diagnostics } = setUp([aStored("a", 25 * H)]);
    expect(await diagnostics.retain(quietLogger(), aPolicy(), T0, false)).toEqual({ diagnostics: [] });
    expect(port.deleted).toEqual([]);
  });
});
