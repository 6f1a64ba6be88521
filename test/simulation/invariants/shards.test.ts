// The shard invariants on hand-written records: one that keeps each rule, one that breaks it.
import { describe, expect, it } from "@jest/globals";
import type { ShardRecord } from "../snapshot.js";
import { T0, snapshot, world } from "./builders.js";
import { INVARIANTS } from "./index.js";

const byName = (name: string) => INVARIANTS.find((i) => i.name === name)!;

function record(o: Partial<ShardRecord>): ShardRecord {
  return {
    start: T0,
    now: T0 + 20_000,
    boundMs: 9_000,
    leaseMs: 4_000,
    markers: [],
    writes: [],
    requests: [],
    renewals: [],
    policies: [{ at: T0, count: 1 }],
    ...o,
  };
}

/** A replica talking to the API every second over [from, to]. */
function alive(user: string, from: number, to: number): ShardRecord["requests"] {
  const out: ShardRecord["requests"] = [];
  for (let at = from; at <= to; at += 1_000) out.push({ at, user });
  return out;
}

const write = (user: string, pos: number) => ({ pos, at: T0 + pos, user, what: "patch endpointslices web-x" });

const handover = (from: string, to: string) => [
  { pos: 1, at: T0, holder: from },
  { pos: 9, at: T0 + 10_000, holder: to },
];

const cases: Array<{ name: string; invariant: string; shards: ShardRecord; violations: number }> = [
  {
    name: "a marker released by its holder and then taken keeps handover-acknowledged",
    invariant: "handover-acknowledged",
    shards: record({
      markers: [...handover("operator-1", ""), { pos: 10, at: T0 + 10_500, holder: "operator-2" }],
      renewals: [{ at: T0 + 9_800, user: "operator-1" }],
    }),
    violations: 0,
  },
  {
    name: "a marker taken from a holder whose shard Lease expired keeps handover-acknowledged",
    invariant: "handover-acknowledged",
    shards: record({
      markers: handover("operator-1", "operator-2"),
      renewals: [{ at: T0 + 5_000, user: "operator-1" }],
    }),
    violations: 0,
  },
  {
    name: "a marker taken from a holder that never renewed keeps handover-acknowledged",
    invariant: "handover-acknowledged",
    shards: record({ markers: handover("operator-1", "operator-2") }),
    violations: 0,
  },
  {
    name: "a marker taken from a holder that renewed within the lease, without its release, breaks handover-acknowledged",
    invariant: "handover-acknowledged",
    shards: record({
      markers: handover("operator-1", "operator-2"),
      renewals: [
        { at: T0 + 7_000, user: "operator-1" },
        { at: T0 + 9_500, user: "operator-1" },
        { at: T0 + 12_000, user: "operator-3" },
      ],
    }),
    violations: 1,
  },
  {
    name: "writes by the marker's holder, then by the next holder after the handover, keep single-owner-writes",
    invariant: "single-owner-writes",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1, holder: "operator-1" },
        { pos: 5, at: T0 + 5, holder: "" },
        { pos: 7, at: T0 + 7, holder: "operator-2" },
      ],
      writes: [write("operator-1", 2), write("operator-1", 4), write("operator-2", 8)],
    }),
    violations: 0,
  },
  {
    name: "a write by the old owner after the new one took the marker breaks single-owner-writes",
    invariant: "single-owner-writes",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1, holder: "operator-1" },
        { pos: 5, at: T0 + 5, holder: "operator-2" },
      ],
      writes: [write("operator-1", 2), write("operator-2", 6), write("operator-1", 7)],
    }),
    violations: 1,
  },
  {
    name: "a write before any marker breaks single-owner-writes",
    invariant: "single-owner-writes",
    shards: record({ markers: [{ pos: 3, at: T0 + 3, holder: "operator-1" }], writes: [write("operator-1", 2)] }),
    violations: 1,
  },
  {
    name: "an owner that died and was replaced within the bound keeps owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1_000, holder: "operator-1" },
        { pos: 50, at: T0 + 12_000, holder: "operator-2" },
      ],
      requests: [...alive("operator-1", T0, T0 + 4_000), ...alive("operator-2", T0, T0 + 20_000)],
    }),
    violations: 0,
  },
  {
    name: "an owner that died and was replaced after longer than the bound breaks owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1_000, holder: "operator-1" },
        { pos: 50, at: T0 + 15_000, holder: "operator-2" },
      ],
      requests: [...alive("operator-1", T0, T0 + 4_000), ...alive("operator-2", T0, T0 + 20_000)],
    }),
    violations: 1,
  },
  {
    name: "a taker that died before its take restarts the bound at its death under owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1_000, holder: "operator-1" },
        { pos: 50, at: T0 + 16_000, holder: "operator-3" },
      ],
      requests: [
        ...alive("operator-1", T0, T0 + 4_000),
        ...alive("operator-2", T0, T0 + 8_000),
        ...alive("operator-3", T0, T0 + 20_000),
      ],
    }),
    violations: 0,
  },
  {
    name: "a taker that died before its take still leaves the bound from its death under owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1_000, holder: "operator-1" },
        { pos: 50, at: T0 + 18_000, holder: "operator-3" },
      ],
      requests: [
        ...alive("operator-1", T0, T0 + 4_000),
        ...alive("operator-2", T0, T0 + 8_000),
        ...alive("operator-3", T0, T0 + 20_000),
      ],
    }),
    violations: 1,
  },
  {
    name: "a replica that started after the owner died and died itself before its Lease expired, then none, keeps owner-gap",
    invariant: "owner-gap",
    // Seed 5137: the gap is not judged while no replica runs; the dead one's last request is no taker.
    shards: record({
      markers: [{ pos: 1, at: T0 + 1_000, holder: "operator-1" }],
      requests: [...alive("operator-1", T0, T0 + 4_000), ...alive("operator-2", T0 + 5_000, T0 + 6_000)],
    }),
    violations: 0,
  },
  {
    name: "a replica started after the short-lived taker's death that takes within the bound keeps owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1_000, holder: "operator-1" },
        { pos: 50, at: T0 + 16_000, holder: "operator-3" },
      ],
      requests: [
        ...alive("operator-1", T0, T0 + 4_000),
        ...alive("operator-2", T0 + 5_000, T0 + 6_000),
        ...alive("operator-3", T0 + 14_000, T0 + 20_000),
      ],
    }),
    violations: 0,
  },
  {
    name: "a replica started after the short-lived taker's death that takes later than the bound breaks owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [
        { pos: 1, at: T0 + 1_000, holder: "operator-1" },
        { pos: 50, at: T0 + 18_000, holder: "operator-3" },
      ],
      requests: [
        ...alive("operator-1", T0, T0 + 4_000),
        ...alive("operator-2", T0 + 5_000, T0 + 6_000),
        ...alive("operator-3", T0 + 8_000, T0 + 20_000),
      ],
    }),
    violations: 1,
  },
  {
    name: "an owner that died with no other replica running is not judged by owner-gap",
    invariant: "owner-gap",
    shards: record({
      markers: [{ pos: 1, at: T0 + 1_000, holder: "operator-1" }],
      requests: alive("operator-1", T0, T0 + 4_000),
    }),
    violations: 0,
  },
  {
    name: "a namespace without a policy may stay without an owner under owner-gap",
    invariant: "owner-gap",
    shards: record({ policies: [{ at: T0, count: 0 }] }),
    violations: 0,
  },
  {
    name: "a namespace with a policy and no marker ever, while a replica runs, breaks owner-gap",
    invariant: "owner-gap",
    shards: record({ requests: alive("operator-1", T0, T0 + 20_000) }),
    violations: 1,
  },
];

describe("shard invariants", () => {
  it.each(cases)("$name", ({ invariant, shards, violations }) => {
    expect(byName(invariant).check(snapshot(world([], {}, []), { shards }))).toHaveLength(violations);
  });

  it.each(["single-owner-writes", "handover-acknowledged", "owner-gap"])(
    "%s does not apply without shards",
    (invariant) => {
      expect(byName(invariant).check(snapshot(world([], {}, []), { shards: undefined }))).toEqual([]);
    },
  );
});
