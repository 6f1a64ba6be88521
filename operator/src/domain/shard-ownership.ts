// Which namespaces this replica acts on, when namespaces are sharded across replicas.
//
// Two kinds of record in the API, both coordination.k8s.io/v1 Leases:
// - a shard Lease per replica (holder = the replica), renewed by that replica only: the live set;
// - a handover marker per namespace whose holderIdentity names the namespace's owner ("" when
//   released). Every change of owner is a conditional write of this one object, so two replicas
//   racing for a namespace cannot both win.
//
// Rules, in order, for each namespace:
// 1. A replica whose own renewal is older than renewDeadline is fenced: it owns nothing.
// 2. It owns a namespace when the marker names it and it confirmed that marker (wrote it, or
//    re-wrote it conditionally) since its current unbroken run of renewals began; after a lapse
//    it re-confirms before acting, since another replica may have taken over meanwhile.
//    The run is kept by renewalAnswered: a renewal counts from its request's start, and an
//    answer that arrives once the replica is already fenced starts a new run at the answer,
//    because the lease may have looked expired to others while the request hung.
// 3. The desired owner is the ring's choice among live replicas (renewTime + leaseDuration +
//    skewMargin >= now), sharing out the namespaces given and those with a marker. An owner that is not the desired one must release: stop acting, finish
//    or abandon in-flight work, then write holder "" (the acknowledgement).
// 4. The desired owner acquires when the marker is absent, released, held by a replica whose
//    shard Lease is expired (by the same rule as 3) or absent, or names itself unconfirmed.
//    It starts acting only once its conditional write succeeded.
// Safety rests on: renewDeadline < leaseDuration, clocks apart by at most skewMargin, and the
// shard Leases being read fresh from the API (not a lagging cache) after the clock is read, so
// every renewal already answered to its holder is seen.
import { buildRing, shareOut, DEFAULT_VIRTUAL_NODES } from "./shard-ring.js";
import type { EpochMs } from "./types.js";

export interface ShardLease {
  identity: string;
  /** The holder's own clock when it last renewed. */
  renewTime: EpochMs;
  leaseDurationMs: number;
}

export interface HandoverMarker {
  /** "" when released. */
  holder: string;
  /** When this replica last wrote the marker as it stands, by its clock; undefined if it did not. */
  confirmedAt?: EpochMs;
}

export interface ShardSelf {
  identity: string;
  /** Start of the last successful renewal of its own shard Lease (its clock). */
  renewedAt?: EpochMs;
  /** Start of the current unbroken run of renewals (each within renewDeadline of the one before). */
  termStart?: EpochMs;
  renewDeadlineMs: number;
}

export interface OwnershipInput {
  self: ShardSelf;
  shards: readonly ShardLease[];
  /** The namespaces to share out. */
  namespaces: readonly string[];
  markers: ReadonlyMap<string, HandoverMarker>;
  now: EpochMs;
  skewMarginMs: number;
  virtualNodes?: number;
}

export interface NamespaceDecision {
  namespace: string;
  action: "own" | "release" | "acquire" | "wait" | "none";
  /** The ring's choice among live replicas. */
  desired: string | undefined;
  reason: string;
}

export interface OwnershipPlan {
  live: string[];
  fenced: boolean;
  owned: string[];
  /** Stop acting, then write holder "" conditionally: the acknowledgement the next owner waits for. */
  release: string[];
  /** Write holder = self conditionally; act only after it succeeded. */
  acquire: string[];
  decisions: NamespaceDecision[];
}

export function isShardExpired(lease: ShardLease, now: EpochMs, skewMarginMs: number): boolean {
  return lease.renewTime + lease.leaseDurationMs + skewMarginMs < now;
}

export function isFenced(self: ShardSelf, now: EpochMs): boolean {
  return self.renewedAt === undefined || !(now < self.renewedAt + self.renewDeadlineMs);
}

/**
 * The shell's record of itself once a renewal of its own shard Lease is answered with success.
 * startedAt is the clock read before the request was sent, answeredAt when the answer arrived.
 */
export function renewalAnswered(self: ShardSelf, startedAt: EpochMs, answeredAt: EpochMs): ShardSelf {
  // Only an answer taken while still unfenced continues the run: while fenced, others may have
  // seen the Lease expire and taken its namespaces, however early the request was sent.
  const continues = self.termStart !== undefined && !isFenced(self, answeredAt);
  return { ...self, renewedAt: startedAt, termStart: continues ? self.termStart : answeredAt };
}

export function liveReplicas(shards: readonly ShardLease[], now: EpochMs, skewMarginMs: number): string[] {
  return [...new Set(shards.filter((s) => !isShardExpired(s, now, skewMarginMs)).map((s) => s.identity))].sort();
}

function confirmedInTerm(self: ShardSelf, marker: HandoverMarker | undefined): boolean {
  if (!marker || marker.holder !== self.identity || marker.confirmedAt === undefined || self.termStart === undefined)
    return false;
  return marker.confirmedAt >= self.termStart;
}

interface Context {
  self: ShardSelf;
  fenced: boolean;
  live: ReadonlySet<string>;
}

function decide(
  ctx: Context,
  namespace: string,
  desired: string | undefined,
  marker: HandoverMarker | undefined,
): NamespaceDecision {
  const me = ctx.self.identity;
  const holder = marker?.holder ?? "";
  const d = (action: NamespaceDecision["action"], reason: string): NamespaceDecision => ({
    namespace,
    action,
    desired,
    reason,
  });
  if (ctx.fenced) {
    return holder === me
      ? d("none", "fenced: own shard Lease not renewed within renewDeadline; acts on nothing")
      : d("none", "fenced");
  }
  const mine = holder === me;
  if (mine && desired !== me)
    return d("release", `the ring now gives it to ${JSON.stringify(desired ?? "")}: stop, then acknowledge`);
  if (mine && confirmedInTerm(ctx.self, marker)) return d("own", "held and confirmed in this term");
  if (mine) return d("acquire", "held from an earlier term: re-confirm before acting");
  if (desired !== me) return d("none", holder ? `owned by ${JSON.stringify(holder)}` : "not ours");
  if (holder === "") return d("acquire", marker ? "released by its previous owner" : "never owned");
  if (!ctx.live.has(holder))
    return d("acquire", `previous owner ${JSON.stringify(holder)} has no live shard Lease (expired + skew margin)`);
  return d("wait", `waiting for ${JSON.stringify(holder)} to acknowledge the handover`);
}

export function planOwnership(input: OwnershipInput): OwnershipPlan {
  if (!(input.skewMarginMs >= 0))
    throw new Error(`shard ownership: skewMarginMs must be >= 0, got ${input.skewMarginMs}`);
  if (!(input.self.renewDeadlineMs > 0))
    throw new Error(`shard ownership: self.renewDeadlineMs must be > 0, got ${input.self.renewDeadlineMs}`);
  const live = liveReplicas(input.shards, input.now, input.skewMarginMs);
  const fenced = isFenced(input.self, input.now);
  // Our own view of ourselves is the renewal we know succeeded, not the copy of our Lease a cache may lag on.
  const members = fenced ? live : [...new Set([...live, input.self.identity])].sort();
  const desired = desiredOwners(input, members);
  const ctx: Context = { self: input.self, fenced, live: new Set(live) };
  const decisions = [...new Set(input.namespaces)]
    .sort()
    .map((ns) => decide(ctx, ns, desired.get(ns), input.markers.get(ns)));
  const pick = (a: NamespaceDecision["action"]) => decisions.filter((x) => x.action === a).map((x) => x.namespace);
  return { live, fenced, owned: pick("own"), release: pick("release"), acquire: pick("acquire"), decisions };
}

/**
 * The namespaces whose caches this replica keeps: those the ring gives it among the live
 * replicas, and those it would get were the replicas gone whose last renewal is older than their
 * renew deadline plus the skew margin (they act on nothing any more, and are likely dead), so a
 * dead replica's namespaces are cached by the time its lease has expired.
 */
export function namespacesToCache(input: OwnershipInput, plan: OwnershipPlan): string[] {
  const me = input.self.identity;
  const desired = plan.decisions.filter((d) => d.desired === me).map((d) => d.namespace);
  const overdue = new Set(
    input.shards
      .filter((s) => s.identity !== me && s.renewTime + input.self.renewDeadlineMs + input.skewMarginMs < input.now)
      .map((s) => s.identity),
  );
  if (!plan.live.some((id) => overdue.has(id))) return desired;
  const fresh = [...new Set([...plan.live.filter((id) => !overdue.has(id)), me])].sort();
  const soon = desiredOwners(input, fresh);
  const mine = plan.decisions.filter((d) => soon.get(d.namespace) === me).map((d) => d.namespace);
  return [...new Set([...desired, ...mine])].sort();
}

/**
 * The ring's choice for each namespace among these members. The shares are balanced over the
 * namespaces given and those with a marker, and a namespace stays with the member its marker
 * names while that member has room: every replica reads the markers alike (fresh from the API),
 * so replicas that plan different subsets still agree on each namespace's owner.
 */
function desiredOwners(input: OwnershipInput, members: readonly string[]): Map<string, string> {
  const ring = buildRing(members, input.virtualNodes ?? DEFAULT_VIRTUAL_NODES);
  const holders = new Map<string, string>();
  for (const [ns, m] of input.markers) if (m.holder) holders.set(ns, m.holder);
  return shareOut(ring, [...input.namespaces, ...input.markers.keys()], holders);
}
