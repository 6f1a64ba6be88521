import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { buildRing, shareOut, hash32, DEFAULT_VIRTUAL_NODES } from "./shard-ring.js";

// Measured over 400 draws of these generators (2-6 replicas, 2,000 namespaces, 100 tokens each):
// adding a replica to a ring that shared the namespaces out moved 0.99x to 1.00x of the 1/(N+1)
// that must move. The bounds leave room over the worst seen, so a run fails only on a real regression.
const MOVED_OVER_IDEAL = { min: 0.9, max: 1.1 };

const dnsLabel = fc.stringMatching(/^[a-z][a-z0-9-]{0,18}[a-z0-9]$/);
const namespacesArb = fc.uniqueArray(dnsLabel, { minLength: 2000, maxLength: 2000 });
const replicasArb = (min: number, max: number) =>
  fc.uniqueArray(fc.stringMatching(/^operator-[a-z0-9]{5}$/), { minLength: min, maxLength: max });

function owners(members: readonly string[], namespaces: readonly string[]): Map<string, string | undefined> {
  return shareOut(buildRing(members), namespaces);
}
/** The hash's choice alone: a namespace by itself on the ring. */
const ringOwner = (ring: ReturnType<typeof buildRing>, ns: string) => shareOut(ring, [ns]).get(ns);

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

describe("buildRing and shareOut", () => {
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
      name: "two replicas share 100 namespaces 50 and 50, where the hash alone gives them 55 and 45",
      check: () => {
        const ring = buildRing(["op-a", "op-b"]);
        const teams = Array.from({ length: 100 }, (_, i) => `team-${i}`);
        const alone = shares(new Map(teams.map((ns) => [ns, ringOwner(ring, ns)])));
        expect(Object.fromEntries(alone)).toEqual({ "op-a": 55, "op-b": 45 });
        expect(Object.fromEntries(shares(shareOut(ring, teams)))).toEqual({ "op-a": 50, "op-b": 50 });
      },
    },
    {
      name: "a namespace whose replica on the ring is full goes to the next replica with room",
      check: () => {
        const ring = buildRing(["op-a", "op-b"]);
        const teams = Array.from({ length: 100 }, (_, i) => `team-${i}`);
        const owned = shareOut(ring, teams);
        const moved = teams.filter((ns) => owned.get(ns) !== ringOwner(ring, ns));
        expect(moved.length).toBe(5);
        for (const ns of moved) expect([ringOwner(ring, ns), owned.get(ns)]).toEqual(["op-a", "op-b"]);
      },
    },
    {
      name: "the same namespaces in any order, repeated or not, get the same replicas",
      check: () => {
        const ring = buildRing(["op-a", "op-b", "op-c"]);
        const teams = Array.from({ length: 30 }, (_, i) => `team-${i}`);
        const reordered = [...teams].reverse().concat(teams.slice(0, 5));
        expect(new Map([...shareOut(ring, reordered)].sort())).toEqual(new Map([...shareOut(ring, teams)].sort()));
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

const holdersOf = (owned: ReadonlyMap<string, string | undefined>) =>
  new Map([...owned].filter((e): e is [string, string] => e[1] !== undefined));

describe("shareOut (property)", () => {
  it("each replica of 2-5 holds floor(n/N) or ceil(n/N) of 2,000 namespaces, and every namespace has one", () => {
    fc.assert(
      fc.property(replicasArb(2, 5), namespacesArb, (members, namespaces) => {
        const owned = owners(members, namespaces);
        const counts = shares(owned);
        expect(Math.max(...counts.values())).toBeLessThanOrEqual(Math.ceil(namespaces.length / members.length));
        expect(Math.min(...counts.values())).toBeGreaterThanOrEqual(Math.floor(namespaces.length / members.length));
        expect([...counts.keys()].sort()).toEqual([...members].sort());
        expect(owned.size).toBe(namespaces.length);
      }),
      { numRuns: 60 },
    );
  });

  it("a replica joining takes about 1/(N+1) of the namespaces, and every other one stays put", () => {
    fc.assert(
      fc.property(replicasArb(2, 6), namespacesArb, (all, namespaces) => {
        const [added, ...members] = all as [string, ...string[]];
        const before = owners(members, namespaces);
        const after = shareOut(buildRing([...members, added]), namespaces, holdersOf(before));
        const moved = namespaces.filter((ns) => before.get(ns) !== after.get(ns));
        expect(moved.filter((ns) => after.get(ns) !== added)).toEqual([]);
        const counts = [...shares(after).values()];
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        const ideal = namespaces.length / (members.length + 1);
        expect(moved.length / ideal).toBeGreaterThanOrEqual(MOVED_OVER_IDEAL.min);
        expect(moved.length / ideal).toBeLessThanOrEqual(MOVED_OVER_IDEAL.max);
      }),
      { numRuns: 60 },
    );
  });

  it("a replica leaving moves its namespaces alone, within the bound", () => {
    fc.assert(
      fc.property(replicasArb(2, 6), namespacesArb, fc.nat(), (members, namespaces, pick) => {
        const removed = members[pick % members.length]!;
        const rest = members.filter((m) => m !== removed);
        const before = owners(members, namespaces);
        const after = shareOut(buildRing(rest), namespaces, holdersOf(before));
        const wrong = namespaces.filter((ns) =>
          before.get(ns) === removed ? after.get(ns) === removed : after.get(ns) !== before.get(ns),
        );
        expect(wrong).toEqual([]);
        const counts = [...shares(after).values()];
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 60 },
    );
  });

  it("a namespace added moves no other; one removed moves at most one other", () => {
    fc.assert(
      fc.property(replicasArb(2, 6), namespacesArb, (members, namespaces) => {
        const [one, ...rest] = namespaces as [string, ...string[]];
        const ring = buildRing(members);
        const without = owners(members, rest);
        const added = shareOut(ring, namespaces, holdersOf(without));
        expect(rest.filter((ns) => added.get(ns) !== without.get(ns))).toEqual([]);
        expect(added.has(one)).toBe(true);
        const removed = shareOut(ring, rest, holdersOf(added));
        expect(rest.filter((ns) => removed.get(ns) !== added.get(ns)).length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 60 },
    );
  });

  it("a namespace held by a replica off the ring, or by one with no room, is shared out like an unheld one", () => {
    fc.assert(
      fc.property(replicasArb(2, 5), namespacesArb, (members, namespaces) => {
        const ring = buildRing(members);
        const fresh = shareOut(ring, namespaces);
        const byStranger = shareOut(ring, namespaces, new Map(namespaces.map((ns) => [ns, "operator-gone"])));
        expect(byStranger).toEqual(fresh);
        const byOne = shareOut(ring, namespaces, new Map(namespaces.map((ns) => [ns, members[0]!])));
        expect(shares(byOne).get(members[0]!)).toBe(Math.ceil(namespaces.length / members.length));
      }),
      { numRuns: 30 },
    );
  });
});
