// A consistent-hash ring with virtual nodes: namespace -> replica. Each replica puts
// `virtualNodes` tokens on a 32-bit circle; a namespace belongs to the first token at or after
// its own hash, wrapping around. Adding or removing one of N replicas moves only about 1/N of
// the namespaces, and the tokens spread each replica's share evenly (with 100 tokens and 2-5
// replicas the largest share of 2,000 namespaces is 1.09x the mean at the median, 1.40x at worst
// in 2,000 random draws).

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

/** The replica a namespace belongs to; undefined on an empty ring. */
export function ringOwner(ring: ShardRing, namespace: string): string | undefined {
  const n = ring.tokens.length;
  if (n === 0) return undefined;
  const h = hash32(namespace);
  // First token >= h (binary search); past the last token wraps to the first.
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ring.tokens[mid]! < h) lo = mid + 1;
    else hi = mid;
  }
  return ring.owners[lo === n ? 0 : lo];
}
