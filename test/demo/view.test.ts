import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import type { Obj } from "../integration/support/cluster.js";
import type { Snapshot } from "../../hack/demo/snapshot.js";
import { fitRows } from "../../hack/demo/terminal.js";
import { checkSafety } from "../../hack/demo/tour.js";
import { assignPodKeys } from "../../hack/demo/pod-keys.js";
import {
  computeBudgetLine,
  computePodRows,
  formatDuration,
  renderView,
  type ViewOptions,
} from "../../hack/demo/view.js";

const NOW = Date.parse("2026-11-30T10:00:00Z");
const iso = (msAgo: number) => new Date(NOW - msAgo).toISOString().replace(/\.000Z$/, "Z");

function aPod(name: string, o: { ip?: string; ageMs?: number; terminating?: boolean; uid?: string } = {}): Obj {
  const metadata: Record<string, unknown> = {
    name,
    namespace: "demo",
    uid: o.uid ?? `uid-${name}`,
    creationTimestamp: iso(o.ageMs ?? 60_000),
  };
  if (o.terminating) metadata.deletionTimestamp = iso(0);
  return { apiVersion: "v1", kind: "Pod", metadata, status: { podIP: o.ip ?? "127.0.10.9" } } as Obj;
}

function aStatusPod(name: string, o: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    uid: `uid-${name}`,
    state: "Healthy",
    since: iso(50_000),
    drained: false,
    reason: "admitted: healthy",
    ...o,
  };
}

function aSlice(ready: Record<string, boolean>): Obj {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "web-abc", namespace: "demo" },
    endpoints: Object.entries(ready).map(([name, r]) => ({
      targetRef: { kind: "Pod", name },
      conditions: { ready: r },
    })),
  } as Obj;
}

function anEvent(
  reason: string,
  msAgo: number,
  o: { kind?: string; name?: string; note?: string; count?: number } = {},
): Obj {
  const e: Record<string, unknown> = {
    metadata: { name: `e-${reason}-${msAgo}` },
    type: reason === "Drained" ? "Normal" : "Warning",
    reason,
    eventTime: new Date(NOW - msAgo).toISOString(),
    regarding: { kind: o.kind ?? "HealthProbePolicy", name: o.name ?? "web" },
    note: o.note ?? `${reason} note`,
  };
  if (o.count) e.series = { count: o.count, lastObservedTime: new Date(NOW - msAgo).toISOString() };
  return e as Obj;
}

function aPolicy(status: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name: "web", namespace: "demo" },
    spec: {
      serviceName: "web",
      dryRun: false,
      probe: { scheme: "HTTP", method: "GET", port: "http", path: "/healthz", periodSeconds: 2, timeoutSeconds: 1 },
      evaluation: { failureThreshold: 3, successThreshold: 1 },
      drain: { enabled: true, maxUnhealthyPercent: 50 },
      replacement: { enabled: true, after: "60s", maxPerHour: 1, maxPerDay: 3, method: "Evict" },
      ...spec,
    },
    status,
  } as Obj;
}

function aSnapshot(o: Partial<Snapshot> = {}): Snapshot {
  return {
    at: NOW,
    namespace: "demo",
    policy: aPolicy(),
    pods: [],
    slices: [],
    events: [],
    targets: [],
    broken: new Set(),
    ...o,
  };
}

const VIEW: ViewOptions = {
  width: 200,
  startedAt: NOW - 72_000,
  kubectl: ".tools/bin/kubectl",
  kubeconfig: ".scratch/demo/kubeconfig",
  operatorLog: ".scratch/demo/operator.log",
};

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [-5_000, "0s"],
    [42_900, "42s"],
    [65_000, "1m05s"],
    [3_600_000 + 3 * 60_000 + 59_000, "1h03m"],
  ])("formats %p ms as %p", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("the pod rows", () => {
  it("list pods oldest first whether the times are strings or the Dates client-node gives typed kinds", () => {
    const old = aPod("web-z", { ageMs: 90_000 });
    old.metadata!.creationTimestamp = new Date(NOW - 90_000) as never;
    const rows = computePodRows(
      aSnapshot({ pods: [aPod("web-a", { ageMs: 10_000 }), old, aPod("web-m", { ageMs: 50_000 })] }),
    );
    expect(rows.map((r) => r.name)).toEqual(["web-z", "web-m", "web-a"]);
  });

  it("say what each pod answers, its state, whether it is in rotation, and its replacement countdown", () => {
    const s = aSnapshot({
      pods: [aPod("web-b", { ageMs: 50_000, ip: "127.0.10.2" }), aPod("web-a", { ageMs: 90_000, ip: "127.0.10.1" })],
      policy: aPolicy({
        pods: [
          aStatusPod("web-a", {
            state: "Unhealthy",
            drained: true,
            unhealthySince: iso(20_000),
            replaceAfter: iso(-40_000),
            lastResult: "HTTP 503",
            reason: "drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
          }),
          aStatusPod("web-b"),
        ],
      }),
      slices: [aSlice({ "web-a": false, "web-b": true })],
      targets: [
        {
          policy: "demo/web",
          pod: "web-a",
          uid: "uid-web-a",
          ip: "127.0.10.1",
          state: "Unhealthy",
          since: iso(20_000),
          unhealthySince: iso(20_000),
          consecutiveSuccesses: 0,
          consecutiveFailures: 7,
          result: "HTTP 503 in 1 ms",
        },
        {
          policy: "demo/web",
          pod: "web-b",
          uid: "uid-web-b",
          ip: "127.0.10.2",
          state: "Healthy",
          since: iso(50_000),
          consecutiveSuccesses: 9,
          consecutiveFailures: 0,
          result: "HTTP 200 in 0 ms",
        },
      ],
      broken: new Set(["web-a"]),
    });
    expect(computePodRows(s)).toEqual([
      {
        key: 1,
        uid: "uid-web-a",
        name: "web-a",
        isNew: false,
        ip: "127.0.10.1",
        answers: "503",
        state: "Unhealthy",
        rotation: "drained",
        failures: 7,
        lastProbe: "HTTP 503 in 1 ms",
        unhealthyFor: "20s",
        replacement: "in 40s",
        verdict: "drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
      },
      {
        key: 2,
        uid: "uid-web-b",
        name: "web-b",
        isNew: false,
        ip: "127.0.10.2",
        answers: "200",
        state: "Healthy",
        rotation: "in",
        failures: 0,
        lastProbe: "HTTP 200 in 0 ms",
        unhealthyFor: "-",
        replacement: "-",
        verdict: "admitted: healthy",
      },
    ]);
  });

  it("show a replaced pod as Terminating and replaced, and an Unhealthy pod past its window as due", () => {
    const s = aSnapshot({
      pods: [aPod("web-a", { terminating: true }), aPod("web-b")],
      policy: aPolicy({
        pods: [
          aStatusPod("web-b", {
            state: "Unhealthy",
            drained: true,
            unhealthySince: iso(70_000),
            replaceAfter: iso(10_000),
          }),
        ],
        replacements: [{ pod: "web-a", uid: "uid-web-a", time: iso(1_000), method: "Evict" }],
      }),
      targets: undefined,
    });
    const [a, b] = computePodRows(s);
    expect([a!.state, a!.replacement]).toEqual(["Terminating", "replaced"]);
    expect([b!.state, b!.replacement, b!.unhealthyFor, b!.rotation]).toEqual(["Unhealthy", "due", "1m10s", "-"]);
  });

  it("take STATE and VERDICT from the same status, never a live state beside a verdict not yet written", () => {
    const s = aSnapshot({
      pods: [aPod("web-a"), aPod("web-b", { ageMs: 1_000 })],
      policy: aPolicy({
        pods: [aStatusPod("web-a", { state: "Unknown", reason: "not admitted: unknown, waiting for first success" })],
      }),
      targets: [
        {
          policy: "demo/web",
          pod: "web-a",
          uid: "uid-web-a",
          ip: "127.0.10.1",
          state: "Healthy",
          since: iso(0),
          consecutiveSuccesses: 1,
          consecutiveFailures: 0,
          result: "HTTP 200 in 1 ms",
        },
        {
          policy: "demo/web",
          pod: "web-b",
          uid: "uid-web-b",
          ip: "127.0.10.2",
          state: "Healthy",
          since: iso(0),
          consecutiveSuccesses: 1,
          consecutiveFailures: 0,
          result: "HTTP 200 in 1 ms",
        },
      ],
    });
    expect(computePodRows(s).map((r) => [r.state, r.verdict, r.lastProbe])).toEqual([
      ["Unknown", "not admitted: unknown, waiting for first success", "HTTP 200 in 1 ms"],
      ["Unknown", "not in the policy's status yet", "HTTP 200 in 1 ms"],
    ]);
  });

  it.each([0, 1, 400, 999, 2_500, 59_999])(
    "count UNHEALTHY FOR and REPLACE in whole seconds of one 60 s window (%d ms past a second)",
    (extra) => {
      const since = NOW - 2_000 - extra;
      const s = aSnapshot({
        pods: [aPod("web-a")],
        policy: aPolicy({
          pods: [
            aStatusPod("web-a", {
              state: "Unhealthy",
              unhealthySince: new Date(since).toISOString(),
              replaceAfter: new Date(since + 60_000).toISOString(),
            }),
          ],
        }),
      });
      const [row] = computePodRows(s);
      const seconds = (t: string) =>
        (/^(?:(\d+)m)?(\d+)s$/.exec(t.replace(/^in /, "")) ?? [])
          .slice(1)
          .reduce((sum, n, i) => sum + Number(n ?? 0) * (i === 0 ? 60 : 1), 0);
      expect(row!.replacement === "due" ? 60 : seconds(row!.unhealthyFor) + seconds(row!.replacement)).toBe(60);
    },
  );

  it("order rows by the pods' keys, mark a pod created since the demo started as new, and give a pod beyond the keys none", () => {
    const pods = [aPod("web-a", { ageMs: 90_000 }), aPod("web-b", { ageMs: 80_000 }), aPod("web-n", { ageMs: 5_000 })];
    const rows = computePodRows(aSnapshot({ pods }), {
      keys: new Map([
        ["uid-web-b", 2],
        ["uid-web-n", 1],
      ]),
      startedAt: NOW - 60_000,
    });
    expect(rows.map((r) => [r.key, r.name, r.isNew])).toEqual([
      [1, "web-n", true],
      [2, "web-b", false],
      [undefined, "web-a", false],
    ]);
  });

  it("show no countdown when replacement is off", () => {
    const s = aSnapshot({
      pods: [aPod("web-a")],
      policy: aPolicy(
        { pods: [aStatusPod("web-a", { state: "Unhealthy", unhealthySince: iso(5_000), replaceAfter: iso(-55_000) })] },
        { replacement: { enabled: false } },
      ),
    });
    expect(computePodRows(s)[0]!.replacement).toBe("-");
  });
});

describe("the budget line", () => {
  it("counts the policy's ledger against maxPerHour and maxPerDay and says when the next slot frees", () => {
    const s = aSnapshot({
      policy: aPolicy({
        replacements: [{ pod: "web-a", uid: "u", time: iso(60_000), method: "Evict" }],
        replacedInLastDay: 1,
      }),
    });
    expect(computeBudgetLine(s)).toBe("hourly 1/1 · daily 1/3 · next slot in 59m00s · replaced in 24h: 1");
  });

  it("says so when replacement is off", () => {
    expect(computeBudgetLine(aSnapshot({ policy: aPolicy({}, { replacement: { enabled: false } }) }))).toBe(
      "replacement disabled",
    );
  });

  it("shows why a ledger the operator could not read either is unreadable, instead of counting it", () => {
    const s = aSnapshot({
      policy: aPolicy({ replacements: [{ pod: "web-a", uid: "u", time: "yesterday", method: "Evict" }] }),
    });
    expect(computeBudgetLine(s)).toBe("status.replacements: entry 0: time must be an RFC 3339 date-time");
  });
});

describe("the whole view", () => {
  const s = aSnapshot({
    pods: [aPod("web-a"), aPod("web-b", { ageMs: 30_000 })],
    policy: aPolicy({
      targets: 2,
      healthy: 1,
      unhealthy: 1,
      drained: 0,
      conditions: [
        { type: "Ready", status: "True", reason: "Reconciled", message: "spec valid" },
        { type: "FailOpen", status: "False", reason: "HealthyTargets", message: "at least one target is Healthy" },
        { type: "DrainCapped", status: "True", reason: "OverCap", message: "1 Unhealthy target kept in rotation" },
      ],
    }),
    events: [
      anEvent("DrainCapped", 5_000),
      anEvent("Drained", 30_000, { kind: "Pod", name: "web-a", count: 3 }),
      anEvent("FailOpen", 60_000),
    ],
  });
  const lines = renderView(s, { ...VIEW, notice: "web-a now answers HTTP 503" });
  const text = lines.join("\n");

  it("cuts every line to the terminal's width", () => {
    const narrow = renderView(s, { ...VIEW, width: 80 });
    expect(narrow.every((l) => l.length <= 80)).toBe(true);
    expect(narrow.filter((l) => l.endsWith("…")).length).toBeGreaterThan(2);
    expect(lines.filter((l) => l.endsWith("…"))).toEqual([]);
  });

  it("at 80x24 drops to a narrow table that keeps POD, STATE, ROTATION and VERDICT whole, and keeps the last key's notice", () => {
    const sick = aSnapshot({
      pods: [aPod("web-a"), aPod("web-b", { ageMs: 30_000 })],
      policy: aPolicy({
        pods: [
          aStatusPod("web-a", { state: "Unhealthy", drained: true, reason: "drained: longest unhealthy" }),
          aStatusPod("web-b"),
        ],
      }),
      slices: [aSlice({ "web-a": false, "web-b": true })],
      events: Array.from({ length: 6 }, (_, i) => anEvent("Drained", i * 1_000)),
    });
    const frame = fitRows(renderView(sick, { ...VIEW, width: 80, notice: "web-a now answers HTTP 503" }), 24);
    expect(frame.length).toBeLessThan(24);
    expect(
      frame
        .find((l) => l.includes("POD"))
        ?.trim()
        .split(/\s+/),
    ).toEqual(["#", "POD", "ANSWERS", "STATE", "ROTATION", "VERDICT"]);
    expect(frame.find((l) => l.includes("web-a"))?.trim()).toMatch(
      /^1\s+web-a\s+200\s+Unhealthy\s+drained\s+drained: longest unhealthy$/,
    );
    expect(frame).toContain("> web-a now answers HTTP 503");
    expect(lines.find((l) => l.includes("POD"))).toContain("UNHEALTHY FOR");
  });

  it("describes the policy in words and counts its targets", () => {
    expect(text).toContain(
      "GET http://<pod>:http/healthz every 2s · Unhealthy after 3 failures, Healthy after 1 · drain at most 50% · replace after 60s",
    );
    expect(text).toContain("targets 2 · healthy 1 · unhealthy 1 · unknown 0 · drained 0");
  });

  it("lists all five conditions, a dash for one not reported", () => {
    expect(
      lines
        .filter((l) => /^ {2}(Ready|Degraded|FailOpen|DrainCapped|ReplacementBlocked) /.test(l))
        .map((l) => l.trim().split(/\s+/).slice(0, 2).join(" ")),
    ).toEqual(["Ready True", "Degraded -", "FailOpen False", "DrainCapped True", "ReplacementBlocked -"]);
  });

  it("shows the latest Events oldest first, with a series' count", () => {
    const events = lines.slice(lines.indexOf("EVENTS") + 1, lines.indexOf("EVENTS") + 4);
    expect(events.map((l) => l.trim().split(/\s+/)[2])).toEqual(["FailOpen", "Drained", "DrainCapped"]);
    expect(events[1]).toContain("pod/web-a");
    expect(events[1]).toMatch(/\(x3\)$/);
  });

  it("shows an Event recorded on both the policy and the pod once", () => {
    const both = aSnapshot({
      events: [
        anEvent("Drained", 2_000, { kind: "Pod", name: "web-a", note: "pod web-a drained" }),
        anEvent("Drained", 2_000, { note: "pod web-a drained" }),
        anEvent("FailOpen", 9_000),
      ],
    });
    const shown = renderView(both, VIEW).filter((l) => / {2}\d\d:\d\d:\d\d {2}/.test(l));
    expect(shown.map((l) => l.trim().split(/\s+/).slice(2, 4).join(" "))).toEqual([
      "FailOpen hpp/web",
      "Drained hpp/web",
    ]);
  });

  it("ends with the keys for the pods shown, the kubectl line to try and the operator log", () => {
    expect(lines.slice(-4)).toEqual([
      "> web-a now answers HTTP 503",
      "keys  1-2 break/heal that pod · a break all · h heal all · q quit",
      "try   .tools/bin/kubectl --kubeconfig .scratch/demo/kubeconfig get hpp -n demo -o wide",
      "      operator log: .scratch/demo/operator.log",
    ]);
  });

  it("says when the operator does not answer", () => {
    expect(renderView({ ...s, targets: undefined }, VIEW)[0]).toContain("operator: not answering");
  });
});

describe("the tour's safety check", () => {
  const policy = (status: Record<string, unknown>) => aPolicy(status);
  it.each([
    [
      "passes a policy within its cap and budget",
      policy({ targets: 5, drained: 2, replacements: [{ pod: "a", uid: "a", time: iso(1_000), method: "Evict" }] }),
      [aSlice({ a: true, b: false })],
      undefined,
    ],
    [
      "fails more drained pods than maxUnhealthyPercent allows",
      policy({ targets: 5, drained: 3 }),
      [],
      "status.drained=3 exceeds floor(5 × 50 / 100) = 2",
    ],
    [
      "fails a Service with no ready endpoint",
      policy({ targets: 2, drained: 0 }),
      [aSlice({ a: false, b: false })],
      "no endpoint of the Service is ready: the Service went dark",
    ],
    [
      "fails two replacements within an hour under maxPerHour=1",
      policy({
        targets: 5,
        replacements: [
          { pod: "a", uid: "a", time: iso(3_000_000), method: "Evict" },
          { pod: "b", uid: "b", time: iso(1_000), method: "Evict" },
        ],
      }),
      [],
      "2 replacements in the last hour, maxPerHour is 1",
    ],
    [
      "passes two replacements more than an hour apart",
      policy({
        targets: 5,
        replacements: [
          { pod: "a", uid: "a", time: iso(3_700_000), method: "Evict" },
          { pod: "b", uid: "b", time: iso(1_000), method: "Evict" },
        ],
      }),
      [],
      undefined,
    ],
  ])("%s", (_name, p, slices, expected) => {
    expect(checkSafety(aSnapshot({ policy: p, slices }))).toBe(expected);
  });
});

describe("a frame taller than the terminal", () => {
  const frame = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);

  it("keeps its top and its last four lines, and says what is left out, within the rows", () => {
    const fitted = fitRows(frame, 20);
    expect(fitted).toHaveLength(19);
    expect(fitted.slice(0, 2)).toEqual(["line 1", "line 2"]);
    expect(fitted.slice(-5)).toEqual([
      "… 22 more lines: make the terminal taller",
      "line 37",
      "line 38",
      "line 39",
      "line 40",
    ]);
  });

  it("is left whole when it fits, or when the rows are unknown", () => {
    expect(fitRows(frame, 41)).toBe(frame);
    expect(fitRows(frame, undefined)).toBe(frame);
  });
});

describe("the pods' keys", () => {
  const pods = (...uids: string[]) => uids.map((uid) => ({ uid }));

  it("are given oldest first, 1 to 9, and a tenth pod gets none", () => {
    const keys = assignPodKeys(new Map(), pods(..."abcdefghij".split("")));
    expect([...keys]).toEqual("abcdefghi".split("").map((u, i) => [u, i + 1]));
  });

  it("stay with their pods when another pod goes, and a new pod takes the smallest free key", () => {
    const first = assignPodKeys(new Map(), pods("a", "b", "c"));
    const afterReplacement = assignPodKeys(first, pods("b", "c", "d"));
    expect([...afterReplacement]).toEqual([
      ["b", 2],
      ["c", 3],
      ["d", 1],
    ]);
    expect([...assignPodKeys(afterReplacement, pods("b", "c", "d", "e"))]).toEqual([
      ["b", 2],
      ["c", 3],
      ["d", 1],
      ["e", 4],
    ]);
  });

  it("never move a key from one live pod to another (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 15 }), { maxLength: 12 }), { maxLength: 20 }),
        (frames) => {
          let keys = new Map<string, number>();
          for (const frame of frames) {
            const next = assignPodKeys(keys, pods(...frame.map(String)));
            for (const [uid, key] of keys) if (next.has(uid)) expect(next.get(uid)).toBe(key);
            expect(new Set(next.values()).size).toBe(next.size);
            keys = next;
          }
        },
      ),
    );
  });
});
