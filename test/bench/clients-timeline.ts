// Where the time of the `clients` benchmark's scenario 1 goes: from the pod switching to failing
// /healthz until its last client request, split at each hand-over on the way (probe results,
// the verdict, the reconcile, the slice write, kube-proxy seeing the slice and syncing its rules),
// read from the timestamps in the operator's, the kubelet's and kube-proxy's logs.

/** Milliseconds after the switch; undefined when the log has no such line. */
export interface DrainSplit {
  /** The first failing probe result after the switch (the operator's, or the kubelet's "Probe failed"). */
  firstFailingProbeMs?: number;
  /** The result that crossed failureThreshold: the operator queues the policy, the kubelet marks the pod not ready. */
  verdictMs?: number;
  /** The operator: the reconcile that the verdict woke started. */
  reconcileStartMs?: number;
  /** The operator (EndpointSlice method): the slice write answered. */
  sliceWrittenMs?: number;
  /** kube-proxy got the EndpointSlice change from its watch. */
  proxySawSliceMs?: number;
  /** kube-proxy's sync that applied it started, and ended (rules in the kernel). */
  proxySyncStartMs?: number;
  proxySyncEndMs?: number;
  /** How long before that sync kube-proxy's previous one ended (it waits minSyncPeriod, 1 s, after each). */
  previousSyncEndedMsBefore?: number;
  /** The last client request the pod answered was sent. */
  lastRequestMs: number;
}

const KLOG = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s/;

/** A klog line's time (local time, no year: the year of `near`), in ms since the epoch. */
export function klogTime(line: string, near: number): number | undefined {
  const m = KLOG.exec(line);
  if (!m) return undefined;
  const [month, day, h, min, s, micros] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(new Date(near).getFullYear(), month - 1, day, h, min, s, micros / 1000).getTime();
}

interface Stamped {
  at: number;
  line: string;
}

const klogLines = (log: string, near: number): Stamped[] =>
  log.split("\n").flatMap((line) => {
    const at = klogTime(line, near);
    return at === undefined ? [] : [{ at, line }];
  });

interface OperatorLine {
  time?: string;
  msg?: string;
  policy?: string;
  uid?: string;
  success?: boolean;
  finishedAt?: number;
}

function operatorLines(log: string): Array<OperatorLine & { at: number }> {
  return log.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      const o = JSON.parse(line) as OperatorLine;
      return o.time ? [{ ...o, at: Date.parse(o.time) }] : [];
    } catch {
      return [];
    }
  });
}

/** The operator's side: its results for the pod, the verdict, the reconcile it woke and the slice write. */
export function operatorSplit(
  log: string,
  policy: string,
  uid: string,
  from: number,
): Pick<DrainSplit, "firstFailingProbeMs" | "verdictMs" | "reconcileStartMs" | "sliceWrittenMs"> {
  const lines = operatorLines(log).filter((l) => l.at >= from && l.policy === policy);
  const failing = lines.find((l) => l.msg === "probe result" && l.uid === uid && l.success === false);
  const verdict = lines.find((l) => l.msg === "verdict changed; policy queued" && l.uid === uid);
  const out: ReturnType<typeof operatorSplit> = {};
  if (failing) out.firstFailingProbeMs = (failing.finishedAt ?? failing.at) - from;
  if (!verdict) return out;
  out.verdictMs = verdict.at - from;
  const reconcile = lines.find((l) => l.msg === "reconcile started" && l.at >= verdict.at);
  if (reconcile) out.reconcileStartMs = reconcile.at - from;
  const written = lines.find((l) => l.msg === "EndpointSlice written" && l.at >= verdict.at);
  if (written) out.sliceWrittenMs = written.at - from;
  return out;
}

/** The kubelet's side: its failing readiness probes of the pod; the failureThreshold-th marks it not ready. */
export function kubeletSplit(
  log: string,
  pod: string,
  from: number,
  failureThreshold: number,
): Pick<DrainSplit, "firstFailingProbeMs" | "verdictMs"> {
  const failures = klogLines(log, from).filter(
    (l) =>
      l.at >= from &&
      l.line.includes('"Probe failed"') &&
      l.line.includes('probeType="Readiness"') &&
      l.line.includes(`pod="${pod}"`),
  );
  const out: ReturnType<typeof kubeletSplit> = {};
  if (failures[0]) out.firstFailingProbeMs = failures[0].at - from;
  const verdict = failures[failureThreshold - 1];
  if (verdict) out.verdictMs = verdict.at - from;
  return out;
}

/**
 * kube-proxy's side (at --v=4): the first EndpointSlice event after `after` (nothing else changes
 * slices in the window), the IPv4 sync that applied it (it merges the Service's endpoints, then
 * logs its start), and the sync before it.
 */
export function proxySplit(
  log: string,
  service: string,
  after: number,
  from: number,
): Pick<DrainSplit, "proxySawSliceMs" | "proxySyncStartMs" | "proxySyncEndMs" | "previousSyncEndedMsBefore"> {
  const lines = klogLines(log, from);
  const out: ReturnType<typeof proxySplit> = {};
  const saw = lines.findIndex((l) => l.at >= after && /handler\.OnEndpoint(Slice(Update|Add)|sDelete)/.test(l.line));
  if (saw < 0) return out;
  out.proxySawSliceMs = lines[saw]!.at - from;
  const ipv4 = (what: string) => (l: Stamped) => l.line.includes(`"${what}"`) && l.line.includes('ipFamily="IPv4"');
  const merged = lines.findIndex(
    (l, i) => i > saw && l.line.includes("service endpoints") && l.line.includes(`portName="${service}`),
  );
  if (merged < 0) return out;
  const start = lines.findIndex((l, i) => i > merged && ipv4("Syncing iptables rules")(l));
  if (start < 0) return out;
  out.proxySyncStartMs = lines[start]!.at - from;
  const previous = lastIndexBefore(lines, saw + 1, ipv4("SyncProxyRules complete"));
  if (previous >= 0) out.previousSyncEndedMsBefore = lines[start]!.at - lines[previous]!.at;
  const end = lines.findIndex((l, i) => i > start && ipv4("SyncProxyRules complete")(l));
  if (end >= 0) out.proxySyncEndMs = lines[end]!.at - from;
  return out;
}

function lastIndexBefore(lines: Stamped[], before: number, pick: (l: Stamped) => boolean): number {
  for (let i = before - 1; i >= 0; i--) if (pick(lines[i]!)) return i;
  return -1;
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** Smallest, median (the lower of the middle two) and largest of a non-empty list. */
export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted[sorted.length - 1]! };
}
