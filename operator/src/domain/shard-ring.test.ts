import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { buildRing, ringOwner, hash32, DEFAULT_VIRTUAL_NODES } from "./shard-ring.js";

// Measured over 2,000 draws of these generators (2-5 replicas, 2,000 namespaces, 100 tokens
// each): the largest share over the mean was 1.09 at the median, 1.27 at the 99th percentile
// and 1.40 at worst; adding a replica moved 0.71x to 1.39x of 1/(N+1) of the namespaces (median
// 1.00). The bounds leave room over the worst seen, so a run fails only on a real regression.
const MAX_SHARE_OVER_MEAN = 1.45;
const MOVED_OVER_IDEAL = { min: 0.6, max: 1.5 };

const dnsLabel = fc.stringMatching(/^[a-z][a-z0-9-]{0,18}[a-z0-9]$/);
const namespacesArb = fc.uniqueArray(dnsLabel, { minLength: 2000, maxLength: 2000 });
const replicasArb = (min: number, max: number) =>
  fc.uniqueArray(fc.stringMatching(/^operator-[a-z0-9]{5}$/), { minLength: min, maxLength: max });

function owners(members: readonly string[], namespaces: readonly string[]): Map<string, string | undefined> {
  const ring = buildRing(members);
  return new Map(namespaces.map((ns) => [ns, ringOwner(ring, ns)]));
}

function shares(owned: ReadonlyMap<string, string | undefined>): Map<string | undefined, number> {
  const counts = new Map<string | undefined, number>();
  for (const owner of owned.values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return counts;
}

/** murmur3's 32-bit finaliser, written out independently of the code under test. */
function fmix32(h: number): number {
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h = (h ^ (h >>> 13)) >>> 0;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

const SAMPLE = ["default", "kube-system", "web-1", "web-2", "payments", "team-a", "team-b", "z"];

describe("buildRing and ringOwner", () => {
  const cases: { name: string; check: () => void }[] = [
    {
      name: "the same members in any order, repeated or not, give the same ring",
      check: () => {
        const a = buildRing(["op-b", "op-a", "op-c"]);
        const b = buildRing(["op-c", "op-a", "op-b", "op-a"]);
        expect(b).toEqual(a);
        for (const ns of SAMPLE) expect(ringOwner(b, ns)).toBe(ringOwner(a, ns));
      },
    },
    {
      name: "an empty ring gives no owner",
      check: () => {
        const ring = buildRing([]);
        expect(ring.tokens).toEqual([]);
        for (const ns of SAMPLE) expect(ringOwner(ring, ns)).toBeUndefined();
      },
    },
    {
      name: "a ring of one member gives it every namespace",
      check: () => {
        const ring = buildRing(["op-a"]);
        for (const ns of SAMPLE) expect(ringOwner(ring, ns)).toBe("op-a");
      },
    },
    {
      name: "each member puts virtualNodes tokens on the ring, sorted",
      check: () => {
        const ring = buildRing(["op-a", "op-b"], 7);
        expect(ring.tokens).toHaveLength(14);
        expect(ring.owners.filter((o) => o === "op-a")).toHaveLength(7);
        expect([...ring.tokens].sort((x, y) => x - y)).toEqual(ring.tokens);
        expect(buildRing(["op-a"]).tokens).toHaveLength(DEFAULT_VIRTUAL_NODES);
      },
    },
    {
      name: "a namespace hashing past the last token wraps to the first token's owner",
      check: () => {
        const ring = buildRing(["op-a", "op-b", "op-c"], 3);
        const last = ring.tokens[ring.tokens.length - 1]!;
        const past = SAMPLE.concat(Array.from({ length: 2000 }, (_, i) => `ns-${i}`)).find((ns) => hash32(ns) > last);
        expect(past).toBeDefined();
        expect(ringOwner(ring, past!)).toBe(ring.owners[0]);
      },
    },
    {
      name: "hash32 is FNV-1a followed by murmur3's finaliser, pinned so that replicas of different versions agree",
      check: () => {
        // Published FNV-1a 32-bit vectors: "" -> 0x811c9dc5, "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968.
        expect(hash32("")).toBe(fmix32(0x811c9dc5));
        expect(hash32("a")).toBe(fmix32(0xe40c292c));
        expect(hash32("foobar")).toBe(fmix32(0xbf9cf968));
        expect([hash32("default"), hash32("web-1"), hash32("web-2")]).toEqual([3803620652, 544574265, 1804504650]);
      },
    },
  ];
  it.each(cases)("$name", ({ check }) => check());

  it.each([
    { name: "zero virtual nodes is refused, naming the field", virtualNodes: 0 },
    { name: "negative virtual nodes is refused, naming the field", virtualNodes: -3 },
    { name: "fractional virtual nodes is refused, naming the field", virtualNodes: 1.5 },
    { name: "NaN virtual nodes is refused, naming the field", virtualNodes: Number.NaN },
  ])("$name", ({ virtualNodes }) => {
    expect(() => buildRing(["op-a"], virtualNodes)).toThrow(/virtualNodes must be a positive integer/);
  });
});

describe("the ring (property)", () => {
  it(`with ${DEFAULT_VIRTUAL_NODES} tokens each, no replica of 2-5 gets more than ${MAX_SHARE_OVER_MEAN}x the mean share of 2,000 namespaces`, () => {
    fc.assert(
      fc.property(replicasArb(2, 5), namespacesArb, (members, namespaces) => {
        const counts = shares(owners(members, namespaces));
        const mean = namespaces.length / members.length;
        expect(Math.max(...counts.values()) / mean).toBeLessThanOrEqual(MAX_SHARE_OVER_MEAN);
        expect([...counts.keys()].sort()).toEqual([...members].sort());
      }),
      { numRuns: 60 },
    );
  });

  it("adding a replica moves namespaces only to it, about 1/(N+1) of them", () => {
    fc.assert(
      fc.property(replicasArb(2, 6), namespacesArb, (all, namespaces) => {
        const [added, ...members] = all as [string, ...string[]];
        const before = owners(members, namespaces);
        const after = owners([...members, added], namespaces);
        const moved = namespaces.filter((ns) => before.get(ns) !== after.get(ns));
        expect(moved.filter((ns) => after.get(ns) !== added)).toEqual([]);
        const ideal = namespaces.length / (members.length + 1);
        expect(moved.length / ideal).toBeGreaterThanOrEqual(MOVED_OVER_IDEAL.min);
        expect(moved.length / ideal).toBeLessThanOrEqual(MOVED_OVER_IDEAL.max);
      }),
      { numRuns: 60 },
    );
  });

  it("removing a replica moves only that replica's namespaces", () => {
    fc.assert(
      fc.property(replicasArb(2, 6), namespacesArb, fc.nat(), (members, namespaces, pick) => {
        const removed = members[pick % members.length]!;
        const before = owners(members, namespaces);
        const after = owners(
          members.filter((m) => m !== removed),
          namespaces,
        );
        const wrong = namespaces.filter((ns) =>
          before.get(ns) === removed ? after.get(ns) === removed : after.get(ns) !== before.get(ns),
        );
        expect(wrong).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});
