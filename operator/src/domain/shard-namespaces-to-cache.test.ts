import { describe, expect, it } from "@jest/globals";
import { namespacesToCache, planOwnership, type OwnershipInput, type ShardLease } from "./shard-ownership.js";
import { buildRing, shareOut } from "./shard-ring.js";

const NAMESPACES = Array.from({ length: 12 }, (_, i) => `team-${i}`);
const NOW = 100_000;
const LEASE = 15_000;
const DEADLINE = 10_000;
const SKEW = 2_000;

const lease = (identity: string, renewedAgoMs: number): ShardLease => ({
  identity,
  renewTime: NOW - renewedAgoMs,
  leaseDurationMs: LEASE,
});

function inputOf(shards: ShardLease[]): OwnershipInput {
  return {
    self: { identity: "a", renewedAt: NOW - 500, termStart: NOW - 60_000, renewDeadlineMs: DEADLINE },
    shards,
    namespaces: NAMESPACES,
    markers: new Map(),
    now: NOW,
    skewMarginMs: SKEW,
  };
}

const ringShare = (members: string[]) => {
  const owners = shareOut(buildRing(members), NAMESPACES);
  return NAMESPACES.filter((ns) => owners.get(ns) === "a");
};

describe("the namespaces a replica keeps caches for", () => {
  it.each([
    {
      name: "every replica renewing on time: exactly the ring's share among the live ones",
      shards: [lease("a", 500), lease("b", 1_000), lease("c", 1_500)],
      expected: ringShare(["a", "b", "c"]),
    },
    {
      name: "one replica silent past its renew deadline but its lease not expired: its share of the ring without it too",
      shards: [lease("a", 500), lease("b", 1_000), lease("c", DEADLINE + SKEW + 1)],
      expected: [...new Set([...ringShare(["a", "b", "c"]), ...ringShare(["a", "b"])])].sort(),
    },
    {
      name: "one replica's lease expired beyond the skew margin: the ring without it, as the plan already says",
      shards: [lease("a", 500), lease("b", 1_000), lease("c", LEASE + SKEW + 1)],
      expected: ringShare(["a", "b"]),
    },
  ])("$name", ({ shards, expected }) => {
    const input = inputOf(shards);
    expect(namespacesToCache(input, planOwnership(input)).sort()).toEqual([...expected].sort());
  });

  it("a replica silent past its renew deadline adds namespaces: the share of the ring without it is larger", () => {
    const input = inputOf([lease("a", 500), lease("b", 1_000), lease("c", DEADLINE + SKEW + 1)]);
    const cached = namespacesToCache(input, planOwnership(input));
    expect(cached.length).toBeGreaterThan(ringShare(["a", "b", "c"]).length);
  });
});
