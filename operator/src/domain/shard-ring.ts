// A consistent-hash ring with virtual nodes and bounded, sticky loads: namespace -> replica.
// Each replica puts `virtualNodes` tokens on a 32-bit circle, and each is given floor(n/N) or
// ceil(n/N) of the n namespaces (after Mirrokni, Thorup and Zadimoghaddam, "Consistent Hashing
// with Bounded Loads", with no slack). Taken in the order of their hashes:
// 1. a namespace stays with the replica that holds it, while that replica is on the ring and
//    has room;
// 2. the rest walk the circle from their own hash to the first token whose replica has room.
// A replica has room below floor(n/N), and at it while fewer than n mod N replicas went past it.
//
// Why bounded: hashing alone gives a replica n/N +- sqrt(n/N) namespaces (56 of 100 on one of two
// replicas was measured, so that replica did 12% more than its share of the work). Why sticky:
// with the bound alone an owner depends on the whole set of namespaces, and adding one moved
// about one other. Staying put, a namespace moves only when its replica leaves the ring or holds
// more than its share (a replica joined, or namespaces went away): a replica joining takes the
// 1/(N+1) that must move, one leaving moves its namespaces alone, and adding a namespace moves
// nothing. The holders are the handover markers, which every replica reads fresh from the API;
// while two replicas' reads differ the handover waits, since an owner releases only on its own
// view and a newcomer takes only what was released or is held by a dead replica.

/** Tokens per replica unless told otherwise. */
export const DEFAULT_VIRTUAL_NODES = 100;

export interface ShardRing {
  /** Sorted by token, then by replica: the same members always give the same ring. */
  readonly tokens: readonly number[];
  readonly owners: readonly string[];
  readonly members: readonly string[];
}

/** FNV-1a, 32 bits: stable across processes and versions, which a ring shared by replicas needs. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // A final avalanche: FNV alone clusters keys that differ only in their last characters ("web-1", "web-2").
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

export function buildRing(members: readonly string[], virtualNodes = DEFAULT_VIRTUAL_NODES): ShardRing {
  if (!Number.isInteger(virtualNodes) || virtualNodes < 1)
    throw new Error(`shard ring: virtualNodes must be a positive integer, got ${virtualNodes}`);
  const unique = [...new Set(members)].sort();
  const points: { token: number; owner: string }[] = [];
  for (const owner of unique) {
    for (let i = 0; i < virtualNodes; i++) points.push({ token: hash32(`${owner}#${i}`), owner });
  }
  // Equal tokens (rare) are ordered by replica name, so every replica builds the same ring.
  points.sort((a, b) => a.token - b.token || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0));
  return { tokens: points.map((p) => p.token), owners: points.map((p) => p.owner), members: unique };
}

/**
 * Each namespace's replica, each replica holding floor(n/N) or ceil(n/N) of them; empty on an
 * empty ring. `holders` says who holds a namespace now. The same ring, namespaces (in any order) and
 * holders give the same answer.
 */
export function shareOut(
  ring: ShardRing,
  namespaces: Iterable<string>,
  holders: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const out = new Map<string, string>();
  const n = ring.tokens.length;
  if (n === 0) return out;
  const keys = [...new Set(namespaces)]
    .map((ns) => ({ ns, h: hash32(ns) }))
    .sort((a, b) => a.h - b.h || (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
  // floor(n/N) each, and one more for n mod N of them: the first to reach it, in hash order.
  const base = Math.floor(keys.length / ring.members.length);
  let extras = keys.length - base * ring.members.length;
  const held = new Map<string, number>(ring.members.map((m) => [m, 0]));
  const give = (ns: string, owner: string): boolean => {
    const count = held.get(owner);
    if (count === undefined || count > base || (count === base && extras === 0)) return false;
    if (count === base) extras--;
    held.set(owner, count + 1);
    out.set(ns, owner);
    return true;
  };
  const walking = keys.filter(({ ns }) => {
    const holder = holders.get(ns);
    return holder === undefined || !give(ns, holder);
  });
  for (const { ns, h } of walking) {
    // Every replica has tokens and the room left is the namespaces left, so the walk always ends.
    for (let i = firstTokenAtOrAfter(ring, h), step = 0; step < n; step++, i = i + 1 === n ? 0 : i + 1) {
      if (give(ns, ring.owners[i]!)) break;
    }
  }
  return out;
}

/** The first token >= h (binary search); past the last token wraps to the first. */
function firstTokenAtOrAfter(ring: ShardRing, h: number): number {
  const n = ring.tokens.length;
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ring.tokens[mid]! < h) lo = mid + 1;
    else hi = mid;
  }
  return lo === n ? 0 : lo;
}
