// What the partition scenario reads from the audit log and the operator's log: the operator's
// writes, its last renewal before the heal, its re-acquire after it, and what it sent in between.
// Needs no node.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { judgePartition, writesIn, type ApiWrite } from "./partition.js";

const dir = mkdtempSync(join(tmpdir(), "partition-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse("2026-01-02T03:04:00Z");
const lease = (at: number, code = 200): ApiWrite => ({
  at: T0 + at,
  verb: "update",
  resource: "leases",
  namespace: "healthprobe-system",
  name: "healthprobe-operator",
  code,
});
const slice = (at: number): ApiWrite => ({
  at: T0 + at,
  verb: "patch",
  resource: "endpointslices",
  namespace: "chaos",
  name: "web-hp",
  code: 200,
});
const logLine = (msg: string, at: number) => ({ msg, time: new Date(T0 + at).toISOString() });
const times = { cut: T0 + 1_000, healed: T0 + 21_000, renewDeadlineMs: 10_000 };

describe("writesIn", () => {
  it("keeps the operator's answered writes, subresources named, and nothing else", () => {
    const file = join(dir, "audit.log");
    const event = (over: Record<string, unknown>) =>
      JSON.stringify({
        stage: "ResponseComplete",
        verb: "patch",
        requestReceivedTimestamp: "2026-01-02T03:04:05.123456Z",
        user: { username: "operator" },
        objectRef: { resource: "healthprobepolicies", subresource: "status", namespace: "chaos", name: "web" },
        responseStatus: { code: 200 },
        ...over,
      });
    const lines = [
      event({}),
      event({ stage: "ResponseStarted" }),
      event({ verb: "get" }),
      event({ user: { username: "kubelet" } }),
      "not json",
    ];
    writeFileSync(file, lines.join("\n") + "\n");
    expect(writesIn(file)).toEqual([
      {
        at: Date.parse("2026-01-02T03:04:05.123Z"),
        verb: "patch",
        resource: "healthprobepolicies/status",
        namespace: "chaos",
        name: "web",
        code: 200,
      },
    ]);
    expect(writesIn(join(dir, "missing.log"))).toEqual([]);
  });
});

describe("judgePartition", () => {
  it("takes the last renewal before the heal and the first after it, and flags writes between its deadline and then", () => {
    const writes = [
      lease(500),
      lease(900),
      slice(950),
      lease(22_000, 409),
      lease(23_000),
      slice(22_500),
      slice(24_000),
    ];
    const logs = [logLine("acquired leader lease", 0), logLine("lost leader lease", 10_800)];
    const v = judgePartition(writes, logs, times);
    expect(v.renewed).toBe(T0 + 900);
    expect(v.deadline).toBe(T0 + 10_900);
    expect(v.reacquired).toBe(T0 + 23_000);
    expect(v.stopped).toBe(T0 + 10_800);
    expect(v.acting).toEqual([slice(22_500)]);
    expect(v.afterHeal).toEqual([slice(22_500)]);
    expect(v.during).toEqual([]);
  });

  it("counts any write that reached the API server while cut off, once past the cut's first second", () => {
    const v = judgePartition([lease(900), slice(1_500), lease(5_000), lease(23_000)], [], times);
    expect(v.during).toEqual([lease(5_000)]);
    expect(v.stopped).toBeUndefined();
    expect(v.renewed).toBe(T0 + 5_000);
  });

  it("reports no re-acquire as Infinity", () => {
    expect(judgePartition([lease(900)], [], times).reacquired).toBe(Infinity);
  });
});
