import { describe, expect, it } from "@jest/globals";
import {
  buildDiagnosticsConfigMap,
  diagnosticsConfigMapName,
  fitLogs,
  labelValueOf,
  type DiagnosticsCapture,
} from "./diagnostics.js";
import { planDiagnosticsRetention, type StoredDiagnostics } from "./diagnostics-retention.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function lines(prefix: string, n: number, width = 10): string {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(width, "0")}\n`).join("");
}

describe("diagnosticsConfigMapName", () => {
  const cases: Array<[string, string, string]> = [
    ["short names", "web", "web-7d9f-abc"],
    ["names with dots", "web.prod", "web.prod-0"],
    ["a 253-character policy and pod", "p".repeat(252) + "1", "q".repeat(200) + "." + "r".repeat(52)],
    ["a cut that would end on a dash", "a".repeat(99) + "-b", "c".repeat(129) + "-d"],
  ];
  it.each(cases)("is a DNS subdomain of at most 253 characters for %s", (_name, policy, pod) => {
    const name = diagnosticsConfigMapName(policy, pod, "uid-1");
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(DNS_SUBDOMAIN);
    expect(name).toContain("-diag-");
  });

  it("is the same for the same pod and differs for another uid of the same name", () => {
    expect(diagnosticsConfigMapName("web", "web-0", "u1")).toBe(diagnosticsConfigMapName("web", "web-0", "u1"));
    expect(diagnosticsConfigMapName("web", "web-0", "u1")).not.toBe(diagnosticsConfigMapName("web", "web-0", "u2"));
    expect(diagnosticsConfigMapName("web", "web-0", "u1")).toMatch(/^web-diag-web-0-[0-9a-f]{8}$/);
  });
});

describe("labelValueOf", () => {
  it.each([
    ["web", "web"],
    ["a".repeat(63), "a".repeat(63)],
  ])("keeps %s as it is", (name, want) => expect(labelValueOf(name)).toBe(want));

  it("cuts a long name with a hash of the whole, still a label value", () => {
    const long = "x".repeat(100);
    const v = labelValueOf(long);
    expect(v.length).toBeLessThanOrEqual(63);
    expect(v).toMatch(LABEL_VALUE);
    expect(v).not.toBe(labelValueOf("x".repeat(101)));
  });
});

describe("fitLogs", () => {
  it("keeps logs that fit whole and says nothing", () => {
    const out = fitLogs([{ key: "logs.app", text: "a\nb\n" }], 1024, 200);
    expect(out).toEqual({ logs: [{ key: "logs.app", text: "a\nb\n" }], notes: [] });
  });

  it("keeps the last lines of a log longer than the line limit", () => {
    const out = fitLogs([{ key: "logs.app", text: lines("l", 300, 3) }], 1 << 20, 200);
    expect(out.logs[0]!.text.split("\n")[0]).toBe("l100");
    expect(out.logs[0]!.text.endsWith("l299\n")).toBe(true);
  });

  it("shares the budget fairly: a short log keeps all, the long ones split what it leaves", () => {
    // 10 bytes, 2 x 2000 bytes; 1000 bytes in all: the short one keeps its 10, the others 495 each.
    const logs = [
      { key: "logs.a", text: lines("a", 100, 8) }, // 100 lines of 10 bytes
      { key: "logs.b", text: "small log\n" },
      { key: "logs.c", text: lines("c", 200, 8) },
    ];
    const out = fitLogs(logs, 1000, 200);
    const size = (k: string) => Buffer.byteLength(out.logs.find((l) => l.key === k)!.text);
    expect(size("logs.b")).toBe(10);
    expect(size("logs.a")).toBeLessThanOrEqual(495);
    expect(size("logs.c")).toBeLessThanOrEqual(495);
    expect(size("logs.a")).toBeGreaterThan(480);
    expect(size("logs.a") + size("logs.b") + size("logs.c")).toBeLessThanOrEqual(1000);
    // The newest lines stay, whole.
    expect(out.logs.find((l) => l.key === "logs.c")!.text.endsWith("c00000199\n")).toBe(true);
    expect(out.logs.find((l) => l.key === "logs.c")!.text.startsWith("c")).toBe(true);
    expect(out.notes).toEqual([
      expect.stringMatching(/^logs\.a: kept the last 49 of 100 lines \(490 of 1000 bytes; /),
      expect.stringMatching(/^logs\.c: kept the last 49 of 200 lines \(490 of 2000 bytes; /),
    ]);
  });

  it("never splits a UTF-8 character when a single line is longer than its share", () => {
    const out = fitLogs([{ key: "logs.app", text: "é".repeat(100) }], 11, 200);
    expect(out.logs[0]!.text).toBe("é".repeat(5));
  });
});

function aCapture(over: Partial<DiagnosticsCapture> = {}): DiagnosticsCapture {
  return {
    policy: { name: "web", uid: "policy-uid", apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy" },
    pod: { name: "web-0", uid: "pod-uid" },
    capturedAt: T0,
    verdict: "Unhealthy since 2026-12-01T09:00:00Z (HTTP 503)",
    logs: [{ container: "app", previous: false, text: "started\nfailing\n" }],
    events: [
      { time: T0 - 1000, type: "Warning", reason: "Unhealthy", note: "Readiness probe failed", count: 3 },
      { time: T0 - 5000, type: "Normal", reason: "Started", note: "Started container app" },
    ],
    podStatus: { conditions: [{ type: "Ready", status: "False" }] },
    probe: { state: "Unhealthy", result: "HTTP 503" },
    ...over,
  };
}

describe("buildDiagnosticsConfigMap", () => {
  it("holds the logs, the Events oldest first, the conditions, the probe record and a summary; labelled and owned by the policy", () => {
    const cm = buildDiagnosticsConfigMap(aCapture());
    expect(cm.name).toMatch(/^web-diag-web-0-[0-9a-f]{8}$/);
    expect(cm.labels).toEqual({
      "healthprobe.io/policy": "web",
      "healthprobe.io/pod": "web-0",
      "app.kubernetes.io/managed-by": "healthprobe-operator",
    });
    expect(cm.annotations["healthprobe.io/captured-at"]).toBe("2026-12-01T10:00:00.000Z");
    expect(cm.ownerReferences).toEqual([
      {
        apiVersion: "healthprobe.io/v1alpha1",
        kind: "HealthProbePolicy",
        name: "web",
        uid: "policy-uid",
        controller: true,
      },
    ]);
    expect(cm.data["logs.app"]).toBe("started\nfailing\n");
    expect(cm.data.events).toBe(
      "2026-12-01T09:59:55Z Normal Started: Started container app\n2026-12-01T09:59:59Z Warning Unhealthy: Readiness probe failed (x3)\n",
    );
    expect(JSON.parse(cm.data.conditions!)).toEqual({ conditions: [{ type: "Ready", status: "False" }] });
    expect(JSON.parse(cm.data.probe!)).toEqual({ state: "Unhealthy", result: "HTTP 503" });
    expect(cm.data.summary).toContain("verdict: Unhealthy since 2026-12-01T09:00:00Z (HTTP 503)");
    expect(cm.problems).toEqual([]);
  });

  it("keeps what it could read and lists what it could not", () => {
    const cm = buildDiagnosticsConfigMap(
      aCapture({
        logs: [
          { container: "app", previous: false, error: "HTTP 500: dial tcp: lookup node-1: no such host" },
          { container: "app", previous: true, text: "before the restart\n" },
        ],
        events: undefined,
        eventsError: "timed out after 5s",
      }),
    );
    expect(cm.data["logs.app.previous"]).toBe("before the restart\n");
    expect(cm.data["logs.app"]).toBeUndefined();
    expect(cm.data.events).toBeUndefined();
    expect(cm.problems).toEqual([
      "logs.app: HTTP 500: dial tcp: lookup node-1: no such host",
      "events: timed out after 5s",
    ]);
    expect(cm.data.summary).toContain("not captured: events: timed out after 5s");
  });

  it("says in the summary which logs were cut to the 64 KiB budget", () => {
    const big = lines("x", 200, 500);
    const cm = buildDiagnosticsConfigMap(
      aCapture({
        logs: [
          { container: "app", previous: false, text: big },
          { container: "sidecar", previous: false, text: big },
        ],
      }),
    );
    const total = Buffer.byteLength(cm.data["logs.app"]!) + Buffer.byteLength(cm.data["logs.sidecar"]!);
    expect(total).toBeLessThanOrEqual(64 * 1024);
    expect(cm.data.summary).toMatch(/truncated: logs\.app: kept the last \d+ of 200 lines/);
    expect(cm.data.summary).toMatch(/truncated: logs\.sidecar: kept the last \d+ of 200 lines/);
  });
});

describe("planDiagnosticsRetention", () => {
  const item = (name: string, agoMs: number): StoredDiagnostics => ({
    name,
    uid: `uid-${name}`,
    pod: name,
    capturedAt: T0 - agoMs,
  });
  const H = 3_600_000;

  it("deletes those older than the retention and requeues at the next expiry", () => {
    const plan = planDiagnosticsRetention({
      items: [item("a", 25 * H), item("b", 2 * H), item("c", 23 * H)],
      now: T0,
      retentionMs: 24 * H,
    });
    expect(plan.keep.map((k) => k.name)).toEqual(["b", "c"]);
    expect(plan.delete).toEqual([{ ...item("a", 25 * H), reason: "older than diagnosticsRetention 24h" }]);
    expect(plan.requeueAt).toBe(T0 + H);
  });

  it("keeps at most `max` per policy, deleting the oldest first", () => {
    const items = Array.from({ length: 22 }, (_, i) => item(`d${String(i).padStart(2, "0")}`, i * 1000));
    const plan = planDiagnosticsRetention({ items, now: T0, retentionMs: 24 * H });
    expect(plan.keep).toHaveLength(20);
    expect(plan.keep[0]!.name).toBe("d00");
    expect(plan.delete.map((d) => [d.name, d.reason])).toEqual([
      ["d20", "more than 20 kept for the policy: the oldest go first"],
      ["d21", "more than 20 kept for the policy: the oldest go first"],
    ]);
  });

  it("plans nothing and no requeue when there is nothing", () => {
    expect(planDiagnosticsRetention({ items: [], now: T0, retentionMs: H })).toEqual({ keep: [], delete: [] });
  });

  it("breaks ties of the same capture time by name, so every replica deletes the same one", () => {
    const plan = planDiagnosticsRetention({ items: [item("b", 0), item("a", 0)], now: T0, retentionMs: H, max: 1 });
    expect(plan.keep.map((k) => k.name)).toEqual(["a"]);
    expect(plan.delete.map((k) => k.name)).toEqual(["b"]);
  });
});
