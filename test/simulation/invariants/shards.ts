// Invariants of sharded replicas, from the API's record only: the namespace's handover marker as
// the store changed it (holder, when, how far the request log had got), and the operator's
// requests in the log. A replica writes for a namespace only inside a term where the marker names
// it; a marker passes from a live replica to another only through that replica's release; a
// namespace with a policy is not left without a live owner longer than the bound.
import type { ShardRecord } from "../snapshot.js";
import type { Snapshot } from "../snapshot.js";
import type { Invariant } from "./types.js";

/** The marker's holder when the request log had `pos` entries ("" before any marker). */
function holderAt(r: ShardRecord, pos: number): string {
  let holder = "";
  for (const m of r.markers) if (m.pos <= pos) holder = m.holder;
  return holder;
}

export const handoverAcknowledged: Invariant = {
  name: "handover-acknowledged",
  rule: 'with shards on, a marker passes from one replica to another only through its release (holder "") or once the holder\'s shard Lease has expired',
  check(s: Snapshot): string[] {
    const r = s.shards;
    if (!r) return [];
    const out: string[] = [];
    r.markers.forEach((m, k) => {
      const from = r.markers[k - 1]?.holder ?? "";
      if (from === "" || m.holder === "" || m.holder === from) return;
      const renewed = lastBy(r.renewals, from, -Infinity, m.at);
      // The taker waits for lease + skew past the last renewal; the lease alone is a bound no clock reading can break.
      if (renewed !== undefined && m.at - renewed < r.leaseMs)
        out.push(
          `${m.holder} took the marker from ${from} at t=${m.at - r.start} ms, ${m.at - renewed} ms after ${from} renewed its shard Lease (lease ${r.leaseMs} ms) and without its release`,
        );
    });
    return out;
  },
};

export const singleOwnerWrites: Invariant = {
  name: "single-owner-writes",
  rule: "with shards on, every operator write for a namespace falls in a term where its marker names the writer",
  check(s: Snapshot): string[] {
    const r = s.shards;
    if (!r) return [];
    return r.writes
      .filter((w) => holderAt(r, w.pos) !== w.user)
      .map(
        (w) =>
          `${w.user} wrote ${w.what} (request ${w.pos}, t=${w.at - r.start} ms) while the marker named "${holderAt(r, w.pos)}"`,
      );
  },
};

/** The time of `user`'s last entry in [from, to] (requests, renewals), or undefined. */
function lastBy(entries: ShardRecord["requests"], user: string, from: number, to: number): number | undefined {
  let last: number | undefined;
  for (const q of entries) if (q.user === user && q.at >= from && q.at <= to) last = q.at;
  return last;
}

/** A replica stopped talking this long before `end` has died (a live one renews its shard Lease every second). */
const DEAD_AFTER_MS = 2_000;

/** The last request of any replica other than `holder` that died within [from, end - DEAD_AFTER_MS], or -Infinity. */
function lastLoss(r: ShardRecord, holder: string, from: number, end: number): number {
  const last = new Map<string, number>();
  for (const q of r.requests) if (q.user !== holder) last.set(q.user, Math.max(last.get(q.user) ?? q.at, q.at));
  let loss = -Infinity;
  for (const at of last.values()) if (at >= from && at < end - DEAD_AFTER_MS) loss = Math.max(loss, at);
  return loss;
}

/**
 * The first request in [since, end] of a replica other than `holder` that still talks after
 * `since`, or undefined. The replica whose death `since` is made its last request at `since`
 * itself: that is no taker (seed 5137: a replica started after the owner died, itself died before
 * the owner's shard Lease expired, and no replica ran for 12.5 s after it).
 */
function firstTaker(r: ShardRecord, holder: string, since: number, end: number): number | undefined {
  const outlives = new Set(
    r.requests.filter((q) => q.user !== holder && q.at > since && q.at <= end).map((q) => q.user),
  );
  return r.requests.find((q) => outlives.has(q.user) && q.at >= since && q.at <= end)?.at;
}

/** When the namespace last came to have a policy at or before `t` (undefined: none at `t`). */
function policySince(r: ShardRecord, t: number): number | undefined {
  let since: number | undefined;
  for (const p of r.policies) {
    if (p.at > t) break;
    if (p.count === 0) since = undefined;
    else since ??= p.at;
  }
  return since;
}

export const ownerGap: Invariant = {
  name: "owner-gap",
  rule: "with shards on, a namespace with a policy is without a live owner, while another replica runs, no longer than lease + skew + period + slack",
  check(s: Snapshot): string[] {
    const r = s.shards;
    if (!r) return [];
    const out: string[] = [];
    // Segments of one marker state; the first, before any marker, has no holder.
    const bounds = [{ at: r.start, holder: "" }, ...r.markers.map((m) => ({ at: m.at, holder: m.holder }))];
    for (let k = 0; k < bounds.length; k++) {
      const seg = bounds[k]!;
      const end = bounds[k + 1]?.at ?? r.now;
      // A holder is live while it still talks to the API; a dead one's gap starts at its last request.
      const orphanFrom = seg.holder === "" ? seg.at : (lastBy(r.requests, seg.holder, seg.at, end) ?? seg.at);
      // Each replica that dies meanwhile changes the live set, and the bound is counted from each
      // death: a survivor waits for the dead one's shard Lease to expire before the ring drops it, so
      // the taker the ring named dying before its take restarts the clock (seeds 2074 and 2082).
      const since = Math.max(orphanFrom, lastLoss(r, seg.holder, orphanFrom, end));
      const policyFrom = policySince(r, end);
      // Only a replica that runs can take over: the gap starts once another one that outlives the
      // last death talks to the API.
      const takerFrom = firstTaker(r, seg.holder, since, end);
      if (policyFrom === undefined || takerFrom === undefined) continue;
      const from = Math.max(since, policyFrom, takerFrom);
      if (end - from > r.boundMs)
        out.push(
          `no live owner from t=${from - r.start} ms to t=${end - r.start} ms (${end - from} ms > ${r.boundMs} ms; marker holder "${seg.holder}")`,
        );
    }
    return out;
  },
};
