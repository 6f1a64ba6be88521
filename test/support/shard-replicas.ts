// Operator replicas with --shards=on as the tests run them, on the API test server and on the real
// control plane alike: the flags with short shard timings, each replica a process of its own user,
// who holds each namespace's handover marker, when ownership has settled, and the checks over the
// API's record of writes that no two replicas wrote for one namespace at once.
import type { Obj } from "./kube-objects.js";
import { startOperatorProcess, type OperatorProcess, type OperatorProcessOptions } from "./operator-process.js";

export const LEASE_MS = 3_000;
export const RENEW_DEADLINE_MS = 2_000;
export const RETRY_MS = 500;
export const SKEW_MS = 500;
export const SHARD_FLAGS = [
  "--shards=on",
  `--shard-lease-duration=${LEASE_MS}ms`,
  `--shard-renew-deadline=${RENEW_DEADLINE_MS}ms`,
  `--shard-retry-period=${RETRY_MS}ms`,
  `--shard-skew-margin=${SKEW_MS}ms`,
  "--insecure-diagnostics",
];
export const OPERATOR_NAMESPACE = "healthprobe-system";
/** What the operator writes for a namespace it owns; its shard and marker Leases are not among them. */
export const ACTING_RESOURCES = new Set(["endpointslices", "healthprobepolicies", "events", "pods"]);
export const isWriteVerb = (verb: string): boolean => ["create", "update", "patch", "delete"].includes(verb);

export type ShardReplica = OperatorProcess & { identity: string; metricsPort: number };

/** Starts a replica as `user`, records it in `into` before it is up (so a failed start is still stopped), and waits for it. */
export async function startShardReplica(
  o: Pick<OperatorProcessOptions, "server" | "dir" | "operatorRoot"> & { user: string; into: ShardReplica[] },
): Promise<ShardReplica> {
  const proc = startOperatorProcess({
    server: o.server,
    dir: o.dir,
    user: o.user,
    flags: SHARD_FLAGS,
    ...(o.operatorRoot ? { operatorRoot: o.operatorRoot } : {}),
  });
  const r = proc as ShardReplica;
  o.into.push(r);
  const { identity } = await proc.started(60_000);
  r.identity = identity;
  r.metricsPort = proc.logs.find((l) => l.msg === "operator started")!.metricsPort as number;
  return r;
}

/** The reads the checks need, from the API test server's cluster or the real control plane. */
export interface ObjectReader {
  list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<Obj[]>;
  get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<Obj | undefined>;
}

/** Namespace → holder of its handover marker, read from the API. */
export async function markerHolders(c: ObjectReader): Promise<Map<string, string>> {
  const leases = await c.list(
    "coordination.k8s.io/v1",
    "Lease",
    OPERATOR_NAMESPACE,
    "healthprobe.io/shard-kind=marker",
  );
  return new Map(
    leases.map((l) => [
      l.metadata!.annotations!["healthprobe.io/shard-namespace"] as string,
      (l.spec?.holderIdentity as string) ?? "",
    ]),
  );
}

export async function gauge(r: ShardReplica, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
  const m = new RegExp(`^${name}\\{replica="${r.identity.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\} (\\d+)`, "m").exec(
    text,
  );
  return m ? Number(m[1]) : undefined;
}

export async function policyStatus(c: ObjectReader, ns: string): Promise<Record<string, any> | undefined> {
  return (await c.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web", ns))?.status;
}

/**
 * Every namespace's marker names a live replica, each policy's status names that owner
 * (status.shard, the SHARD column of -o wide), and each replica's gauges add up to its share.
 */
export async function settled(
  c: ObjectReader,
  replicas: ShardReplica[],
  namespaces: readonly string[],
  podsPerNamespace: number,
): Promise<Map<string, string> | undefined> {
  const holders = await markerHolders(c);
  const ids = new Set(replicas.map((r) => r.identity));
  if (!namespaces.every((ns) => ids.has(holders.get(ns) ?? ""))) return undefined;
  for (const ns of namespaces) if ((await policyStatus(c, ns))?.shard !== holders.get(ns)) return undefined;
  for (const r of replicas) {
    const mine = namespaces.filter((ns) => holders.get(ns) === r.identity).length;
    if ((await gauge(r, "healthprobe_shard_namespaces_owned")) !== mine) return undefined;
    if ((await gauge(r, "healthprobe_shard_targets_owned")) !== podsPerNamespace * mine) return undefined;
  }
  return holders;
}

/** The replica holding the most namespaces' markers. */
export function mostLoaded(replicas: ShardReplica[], holders: Map<string, string>): ShardReplica {
  const share = (r: ShardReplica) => [...holders.values()].filter((h) => h === r.identity).length;
  return [...replicas].sort((x, y) => share(y) - share(x))[0]!;
}

/**
 * One write in the API's record. start/end: when the server received and answered it, on one
 * scale (a request log's position for both, or an audit log's microseconds).
 */
export interface RecordedWrite {
  /** The writer's kubeconfig user. */
  user: string;
  /** The namespace acted on; for a marker, the namespace it is about. */
  namespace: string;
  /** The namespace's handover marker, not an object of the namespace. */
  marker: boolean;
  /** A marker's holderIdentity as written, where the record has request bodies ("" is a release). */
  holder?: string;
  start: number;
  end: number;
  code: number;
  what: string;
}

/** Runs of consecutive writes (markers aside) by one user, per namespace, in the server's order. */
export function writerIntervals(
  record: readonly RecordedWrite[],
): Map<string, Array<{ user: string; writes: RecordedWrite[] }>> {
  const out = new Map<string, Array<{ user: string; writes: RecordedWrite[] }>>();
  for (const w of [...record].filter((x) => !x.marker).sort((a, b) => a.start - b.start)) {
    const runs = out.get(w.namespace) ?? [];
    out.set(w.namespace, runs);
    const run = runs.at(-1);
    if (run?.user === w.user) run.writes.push(w);
    else runs.push({ user: w.user, writes: [w] });
  }
  return out;
}

const successfulMarkers = (record: readonly RecordedWrite[], ns: string) =>
  record.filter((m) => m.marker && m.namespace === ns && m.code < 400).sort((a, b) => a.start - b.start);

/**
 * Per namespace: a run of one replica's writes may follow another replica's only if its replica
 * wrote the namespace's marker in between (after the other's last write, before its own first).
 * Two replicas writing in overlapping terms would interleave without such a marker write between
 * their runs. Needs no request bodies.
 */
export function handoverViolations(record: readonly RecordedWrite[]): string[] {
  const problems: string[] = [];
  for (const [ns, runs] of writerIntervals(record)) {
    const markers = successfulMarkers(record, ns);
    for (let k = 1; k < runs.length; k++) {
      const [prev, cur] = [runs[k - 1]!.writes.at(-1)!, runs[k]!.writes[0]!];
      if (!markers.some((m) => m.user === cur.user && m.start > prev.end && m.end < cur.start))
        problems.push(
          `${ns}: ${cur.user} wrote (${cur.what} at ${cur.start}) after ${prev.user} (${prev.what} at ${prev.end}) without taking the marker in between`,
        );
    }
  }
  return problems;
}

export interface OwnershipTerm {
  user: string;
  /** The answer to the marker write that named it: it acts only after that. */
  from: number;
  /** The receipt of the next marker write naming someone else or no one (Infinity: still held). */
  to: number;
}

/**
 * A namespace's ownership terms from its marker writes (with holders): a conditional write that
 * succeeded names the holder from then on; a re-write naming the same holder continues its term.
 * `userOf` maps a holder identity to its writer's user.
 */
export function ownershipTerms(
  record: readonly RecordedWrite[],
  ns: string,
  userOf: (identity: string) => string | undefined,
): OwnershipTerm[] {
  const terms: OwnershipTerm[] = [];
  for (const m of successfulMarkers(record, ns)) {
    if (m.holder === undefined) throw new Error(`ownership terms need marker bodies: ${m.what} has no holder`);
    const user = m.holder === "" ? "" : (userOf(m.holder) ?? `identity ${m.holder}`);
    const open = terms.at(-1)?.to === Infinity ? terms.at(-1) : undefined;
    if (open?.user === user) continue;
    if (open) open.to = m.start;
    if (user) terms.push({ user, from: m.end, to: Infinity });
  }
  return terms;
}

/**
 * Every write (received to answered) must lie inside a term of its writer for that namespace.
 * Times are reported from `t0` in the record's scale divided by `perUnit` (an audit log's
 * microseconds: 1000 for ms).
 */
export function writesOutsideTerms(
  record: readonly RecordedWrite[],
  userOf: (identity: string) => string | undefined,
  report: { t0: number; perUnit: number } = { t0: 0, perUnit: 1 },
): string[] {
  const problems: string[] = [];
  const at = (t: number) => (t === Infinity ? "now" : `+${Math.round((t - report.t0) / report.perUnit)}`);
  for (const [ns, runs] of writerIntervals(record)) {
    const terms = ownershipTerms(record, ns, userOf);
    for (const run of runs) {
      const mine = terms.filter((t) => t.user === run.user);
      const outside = run.writes.filter((w) => !mine.some((t) => t.from <= w.start && w.end <= t.to));
      if (outside.length === 0) continue;
      const first = run.writes[0]!;
      const last = run.writes.at(-1)!;
      problems.push(
        `${ns}: ${run.user} wrote from ${at(first.start)} to ${at(last.end)} (${run.writes.length} writes), ${outside.length} outside its terms [${mine.map((t) => `${at(t.from)}..${at(t.to)}`).join(", ")}], first ${outside[0]!.what} at ${at(outside[0]!.start)}`,
      );
    }
  }
  return problems;
}
