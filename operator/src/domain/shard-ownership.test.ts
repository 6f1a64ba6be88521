import { describe, it, expect } from "@jest/globals";
import { buildRing, hash32, shareOut } from "./shard-ring.js";
import {
  planOwnership,
  renewalAnswered,
  type HandoverMarker,
  type OwnershipInput,
  type ShardLease,
} from "./shard-ownership.js";

const NOW = 1_000_000;
const LEASE = 15_000;
const DEADLINE = 10_000;
const NAMESPACES = Array.from({ length: 40 }, (_, i) => `ns-${i}`);
const lease = (identity: string, renewTime = NOW - 1_000): ShardLease => ({
  identity,
  renewTime,
  leaseDurationMs: LEASE,
});
// A namespace alone on the ring goes to the first token at or after its hash.
const firstFor = (members: string[], owner: string) =>
  NAMESPACES.find((ns) => shareOut(buildRing(members), [ns]).get(ns) === owner)!;
// With both a and b live, `ofA` is a's and `ofB` is b's; with a alone, both are a's.
const ofA = firstFor(["a", "b"], "a");
const ofB = firstFor(["a", "b"], "b");
// One replica holding both is over its share of one: it keeps the one earlier by hash.
const [early, late] = [ofA, ofB].sort((x, y) => hash32(x) - hash32(y)) as [string, string];

function input(over: {
  namespaces?: string[];
  markers?: [string, HandoverMarker][];
  shards?: ShardLease[];
  renewedAt?: number;
  termStart?: number;
  skew?: number;
}): OwnershipInput {
  return {
    self: {
      identity: "a",
      renewedAt: over.renewedAt ?? NOW - 1_000,
      termStart: over.termStart ?? NOW - 5_000,
      renewDeadlineMs: DEADLINE,
    },
    shards: over.shards ?? [lease("a"), lease("b")],
    namespaces: over.namespaces ?? [ofA, ofB],
    markers: new Map(over.markers ?? []),
    now: NOW,
    skewMarginMs: over.skew ?? 500,
  };
}

const action = (i: OwnershipInput, ns: string) => planOwnership(i).decisions.find((d) => d.namespace === ns)!.action;
const mineConfirmed: HandoverMarker = { holder: "a", confirmedAt: NOW - 2_000 };

describe("planOwnership", () => {
  const cases: { name: string; given: OwnershipInput; ns: string; want: string }[] = [
    {
      name: "a replica not renewed within renewDeadline is fenced and owns nothing, even a marker it confirmed",
      given: input({ renewedAt: NOW - DEADLINE, markers: [[ofA, mineConfirmed]] }),
      ns: ofA,
      want: "none",
    },
    {
      name: "a replica that never renewed is fenced",
      given: { ...input({}), self: { identity: "a", renewDeadlineMs: DEADLINE } },
      ns: ofA,
      want: "none",
    },
    {
      name: "it owns a namespace whose marker it confirmed in this term",
      given: input({ markers: [[ofA, mineConfirmed]] }),
      ns: ofA,
      want: "own",
    },
    {
      name: "it releases a namespace it holds beyond its share once another live replica has room",
      given: input({
        markers: [
          [early, mineConfirmed],
          [late, mineConfirmed],
        ],
      }),
      ns: late,
      want: "release",
    },
    {
      name: "it keeps the namespaces it holds within its share, wherever their hashes fall",
      given: input({
        markers: [
          [early, mineConfirmed],
          [late, mineConfirmed],
        ],
      }),
      ns: early,
      want: "own",
    },
    {
      name: "it keeps a namespace it holds that the hash alone would give to another live replica, while it has room",
      given: input({ namespaces: [ofB], markers: [[ofB, mineConfirmed]] }),
      ns: ofB,
      want: "own",
    },
    { name: "it acquires a namespace that was never owned", given: input({}), ns: ofA, want: "acquire" },
    {
      name: "it acquires a namespace its previous owner released",
      given: input({ markers: [[ofA, { holder: "" }]] }),
      ns: ofA,
      want: "acquire",
    },
    {
      name: "it acquires from a previous owner whose shard Lease expired beyond the skew margin",
      given: input({ shards: [lease("a"), lease("b", NOW - LEASE - 501)], markers: [[ofB, { holder: "b" }]] }),
      ns: ofB,
      want: "acquire",
    },
    {
      name: "it acquires from a previous owner with no shard Lease at all",
      given: input({ shards: [lease("a")], markers: [[ofB, { holder: "b" }]] }),
      ns: ofB,
      want: "acquire",
    },
    {
      name: "it waits while the old owner is alive and has not acknowledged",
      given: input({
        markers: [
          [early, { holder: "b" }],
          [late, { holder: "b" }],
        ],
      }),
      ns: late,
      want: "wait",
    },
    {
      name: "it leaves alone a namespace the ring gives to another replica",
      given: input({ markers: [[ofB, { holder: "b" }]] }),
      ns: ofB,
      want: "none",
    },
    {
      name: "after a lapse it re-confirms a marker confirmed before its current term instead of acting",
      given: input({ termStart: NOW - 1_000, markers: [[ofA, mineConfirmed]] }),
      ns: ofA,
      want: "acquire",
    },
    {
      name: "a marker naming it that it never confirmed is re-confirmed, not acted on",
      given: input({ markers: [[ofA, { holder: "a" }]] }),
      ns: ofA,
      want: "acquire",
    },
  ];
  it.each(cases)("$name", ({ given, ns, want }) => {
    expect(action(given, ns)).toBe(want);
  });

  it("an old owner within the skew margin is still live, so a namespace it holds is waited for", () => {
    // b's Lease expired 500 ms ago by a's clock; with a 500 ms margin b may still think it is valid.
    const given = input({
      shards: [lease("a"), lease("b", NOW - LEASE - 500)],
      markers: [
        [early, { holder: "b" }],
        [late, { holder: "b" }],
      ],
    });
    expect(planOwnership(given).live).toEqual(["a", "b"]);
    expect(action(given, late)).toBe("wait");
  });

  it.each([
    { name: "a negative skewMargin is refused naming the field", over: { skewMarginMs: -1 }, field: "skewMarginMs" },
    { name: "a NaN skewMargin is refused naming the field", over: { skewMarginMs: NaN }, field: "skewMarginMs" },
    {
      name: "a zero renewDeadline is refused naming the field",
      over: { self: { identity: "a", renewDeadlineMs: 0 } },
      field: "renewDeadlineMs",
    },
  ])("$name", ({ over, field }) => {
    expect(() => planOwnership({ ...input({}), ...over })).toThrow(field);
  });
});

describe("renewalAnswered", () => {
  const self = { identity: "a", renewedAt: NOW, termStart: NOW - 20_000, renewDeadlineMs: DEADLINE };
  it.each([
    {
      name: "an answer taken before the fencing deadline continues the term, counted from the request's start",
      startedAt: NOW + 9_000,
      answeredAt: NOW + 9_999,
      want: { renewedAt: NOW + 9_000, termStart: NOW - 20_000 },
    },
    {
      name: "an answer taken after the fencing deadline starts a new term at the answer, however early the request was sent",
      startedAt: NOW + 9_000,
      answeredAt: NOW + 10_000,
      want: { renewedAt: NOW + 9_000, termStart: NOW + 10_000 },
    },
    {
      name: "the first renewal starts a term at its answer",
      startedAt: NOW,
      answeredAt: NOW + 50,
      want: { renewedAt: NOW, termStart: NOW + 50 },
      first: true,
    },
  ])("$name", ({ startedAt, answeredAt, want, first }) => {
    const from = first ? { identity: "a", renewDeadlineMs: DEADLINE } : self;
    expect(renewalAnswered(from, startedAt, answeredAt)).toMatchObject(want);
  });
});
