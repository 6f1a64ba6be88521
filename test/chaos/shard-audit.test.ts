// The single-writer check of the sharded chaos test on hand-written audit logs: a clean handover
// and a takeover from a dead replica pass, and each way two replicas could write for one namespace
// at once (the acknowledgement skipped, a write after the term ended, a write before any marker,
// a write still in flight when the next owner took over) is reported.
import { describe, expect, it } from "@jest/globals";
import { handoverViolations, writesOutsideTerms } from "../support/shard-replicas.js";
import { auditMicros, shardWritesInAudit } from "./shard-audit.js";

const NS = "team-1";
const USERS = ["operator-a", "operator-b"];
const userOf = (identity: string) => ({ "id-a": "operator-a", "id-b": "operator-b" })[identity];
/** Seconds after 20:00:00 as an audit timestamp, with microseconds. */
const ts = (s: number) =>
  `2026-12-01T20:00:${String(Math.floor(s)).padStart(2, "0")}.${String(Math.round((s % 1) * 1e6)).padStart(6, "0")}Z`;

function event(user: string, from: number, to: number, over: Record<string, unknown>): string {
  return JSON.stringify({
    stage: "ResponseComplete",
    verb: "update",
    requestReceivedTimestamp: ts(from),
    stageTimestamp: ts(to),
    user: { username: user },
    responseStatus: { code: 200 },
    ...over,
  });
}

const marker = (user: string, from: number, to: number, holder: string, code = 200) =>
  event(user, from, to, {
    objectRef: { resource: "leases", namespace: "healthprobe-system", name: `hp-ns-${NS}-0a1b2c3d` },
    requestObject: {
      metadata: { annotations: { "healthprobe.io/shard-namespace": NS } },
      spec: { holderIdentity: holder },
    },
    responseStatus: { code },
  });
const slice = (user: string, from: number, to: number) =>
  event(user, from, to, { objectRef: { resource: "endpointslices", namespace: NS, name: "web-x" } });

const check = (lines: string[]) => {
  const record = shardWritesInAudit(lines.join("\n") + "\n", USERS, [NS]);
  return { terms: writesOutsideTerms(record, userOf), runs: handoverViolations(record) };
};

describe("writes outside their writer's ownership term, from the audit log", () => {
  it("reads microseconds from audit timestamps", () => {
    expect(auditMicros("2026-12-01T20:00:01.000002Z") - auditMicros("2026-12-01T20:00:01Z")).toBe(2);
    expect(auditMicros("2026-12-01T20:00:01.5Z") - auditMicros("2026-12-01T20:00:01Z")).toBe(500_000);
  });

  it.each([
    [
      "an acknowledged handover",
      [
        marker("operator-a", 1, 1.1, "id-a"),
        slice("operator-a", 2, 2.1),
        marker("operator-a", 3, 3.1, ""),
        marker("operator-b", 4, 4.1, "id-b"),
        slice("operator-b", 5, 5.1),
      ],
    ],
    [
      "a takeover from a dead owner, its re-confirmation, and a refused take by the other",
      [
        marker("operator-a", 1, 1.1, "id-a"),
        slice("operator-a", 2, 2.1),
        marker("operator-b", 6, 6.1, "id-b"),
        marker("operator-a", 6.2, 6.3, "id-a", 409),
        marker("operator-b", 7, 7.1, "id-b"),
        slice("operator-b", 8, 8.1),
      ],
    ],
  ])("%s passes", (_name, lines) => {
    expect(check(lines)).toEqual({ terms: [], runs: [] });
  });

  it.each([
    [
      "the acknowledgement skipped: the old owner writes on after the new one took the marker",
      [
        marker("operator-a", 1, 1.1, "id-a"),
        slice("operator-a", 2, 2.1),
        marker("operator-b", 3, 3.1, "id-b"),
        slice("operator-b", 4, 4.1),
        slice("operator-a", 5, 5.1),
      ],
      { terms: 1, runs: 1 },
    ],
    [
      "a write after its own release",
      [marker("operator-a", 1, 1.1, "id-a"), marker("operator-a", 2, 2.1, ""), slice("operator-a", 3, 3.1)],
      { terms: 1, runs: 0 },
    ],
    [
      "a write before any marker",
      [slice("operator-a", 0.5, 0.6), marker("operator-a", 1, 1.1, "id-a")],
      { terms: 1, runs: 0 },
    ],
    [
      "a write acting before its take was answered",
      [marker("operator-a", 1, 1.5, "id-a"), slice("operator-a", 1.2, 1.3)],
      { terms: 1, runs: 0 },
    ],
    [
      "a write still in flight when the next owner took over",
      [marker("operator-a", 1, 1.1, "id-a"), slice("operator-a", 2, 4), marker("operator-b", 3, 3.1, "id-b")],
      { terms: 1, runs: 0 },
    ],
    [
      "a take refused with a conflict does not start a term",
      [marker("operator-a", 1, 1.1, "id-a"), marker("operator-b", 2, 2.1, "id-b", 409), slice("operator-b", 3, 3.1)],
      { terms: 1, runs: 0 },
    ],
  ])("%s is reported", (_name, lines, counts) => {
    const found = check(lines);
    expect({ terms: found.terms.length, runs: found.runs.length }).toEqual(counts);
  });

  it("keeps other users, the shard Leases and the last line still being written out, and refuses a marker without its body", () => {
    const lines = [
      marker("operator-a", 1, 1.1, "id-a"),
      slice("admin", 2, 2.1),
      event("operator-b", 2, 2.1, {
        objectRef: { resource: "leases", namespace: "healthprobe-system", name: "hp-shard-b" },
      }),
      event("operator-a", 3, 3.1, { verb: "list", objectRef: { resource: "endpointslices", namespace: NS } }),
    ];
    const record = shardWritesInAudit(`${lines.join("\n")}\n{"stage":"Respo`, USERS, [NS]);
    expect(record.map((w) => [w.user, w.marker, w.holder])).toEqual([["operator-a", true, "id-a"]]);
    const bare = JSON.parse(marker("operator-a", 1, 1.1, "id-a"));
    delete bare.requestObject.spec;
    expect(() => shardWritesInAudit(JSON.stringify(bare), USERS, [NS])).toThrow(/no request body/);
  });
});
