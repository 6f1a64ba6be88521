// The operator's network path to kube-apiserver dropped inside the node's network namespace, and
// what the audit log says the operator wrote around it.
//
// Everything on the node (kubelet, kube-proxy, controller-manager, scheduler, the host's bridge)
// reaches kube-apiserver on 127.0.0.1:API_PORT from the same namespace and as root, like the
// operator: neither that address nor an owner match tells the operator apart, and cgroup v1 has no
// cgroup path match. kube-apiserver listens on every address of the namespace, so the operator is
// given a loopback address of its own, OPERATOR_API_HOST, and the rules drop only that address's
// API traffic. Both directions, since on loopback the server's answers are locally sent packets
// too: with only the requests dropped, the operator would still read its open watches. DROP, not
// REJECT: packets vanish and open connections hang, as in a real partition.
import type { NodeNamespace } from "../../hack/control-plane/real-node/namespace.js";
import { OPERATOR_USER } from "./chaos-world.js";
import { readAuditLog } from "../../hack/control-plane/audit.js";

/** The loopback address only the operator's kubeconfig uses to reach kube-apiserver. */
export const OPERATOR_API_HOST = "127.0.0.2";
/** The operator's Lease (its --leader-election-id default, in --operator-namespace). */
export const LEADER_LEASE = { namespace: "healthprobe-system", name: "healthprobe-operator" };
const CHAIN = "HP-PARTITION";

/** A request whose bytes arrived before the rules went in may be stamped received a moment later on a loaded machine. */
const RECEIVED_LAG_MS = 1_000;
const WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"];

/** The chaos suite's audit policy plus the metadata of every write the operator sends (its Lease's included). */
export const withOperatorWrites = (policy: { rules: object[] }): object => ({
  ...policy,
  rules: [{ level: "Metadata", users: [OPERATOR_USER], verbs: WRITE_VERBS }, ...policy.rules],
});

export interface Partition {
  /** Removes the rules; the namespace's other rules (kube-proxy's) stay as they were. */
  heal(): Promise<void>;
}

/** Drops every TCP packet to or from `host`:`port` sent inside the node's namespace, in a chain of its own. */
export async function partition(ns: NodeNamespace, host: string, port: number): Promise<Partition> {
  // ns.exec runs it under nsenter --net=<the node's namespace>: the machine's own rules are never touched.
  const iptables = (...args: string[]) => ns.exec("iptables", ["-w", ...args]);
  await iptables("-N", CHAIN);
  await iptables("-A", CHAIN, "-p", "tcp", "-d", host, "--dport", String(port), "-j", "DROP");
  await iptables("-A", CHAIN, "-p", "tcp", "-s", host, "--sport", String(port), "-j", "DROP");
  // First in OUTPUT, ahead of kube-proxy's jumps: every loopback packet, either way, is sent locally.
  await iptables("-I", "OUTPUT", "1", "-j", CHAIN);
  return {
    heal: async () => {
      await iptables("-D", "OUTPUT", "-j", CHAIN);
      await iptables("-F", CHAIN);
      await iptables("-X", CHAIN);
    },
  };
}

/** A write the operator sent, as the audit log recorded it once answered. */
export interface ApiWrite {
  at: number;
  verb: string;
  resource: string;
  namespace: string;
  name: string;
  code: number;
}

export function writesIn(auditLog: string): ApiWrite[] {
  const out: ApiWrite[] = [];
  for (const e of readAuditLog(auditLog)) {
    if (e.stage !== "ResponseComplete" || e.user?.username !== OPERATOR_USER || !WRITE_VERBS.includes(e.verb ?? ""))
      continue;
    const ref = e.objectRef ?? {};
    out.push({
      at: Date.parse(e.requestReceivedTimestamp ?? ""),
      verb: e.verb!,
      resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : (ref.resource ?? ""),
      namespace: ref.namespace ?? "",
      name: ref.name ?? "",
      code: e.responseStatus?.code ?? 0,
    });
  }
  return out;
}

export const isLeaderLease = (w: ApiWrite): boolean =>
  w.resource === "leases" && w.namespace === LEADER_LEASE.namespace && w.name === LEADER_LEASE.name;

export interface PartitionVerdict {
  /** The operator's last successful lease write before the heal: its last renewal. */
  renewed: number;
  /** renewed + its renew deadline. */
  deadline: number;
  /** Its first successful lease write after the heal: holding the lease again (Infinity if none). */
  reacquired: number;
  /** When its log first said it stopped acting after the cut (lost its lease, stopped leading). */
  stopped: number | undefined;
  /** Its writes other than the Lease that reached the API server after its deadline and before `reacquired`. */
  acting: ApiWrite[];
  /** The ones of `acting` that came after the heal: stale writes flushed. */
  afterHeal: ApiWrite[];
  /** Any write of it, its Lease's included, that reached the API server while cut off: the rules leaked. */
  during: ApiWrite[];
}

/** What the audit log and the operator's log say about a partition from `cut` to `healed`. */
export function judgePartition(
  writes: ApiWrite[],
  logs: Array<Record<string, any>>,
  t: { cut: number; healed: number; renewDeadlineMs: number },
): PartitionVerdict {
  const renewals = writes.filter((w) => isLeaderLease(w) && w.code >= 200 && w.code < 300);
  const renewed = Math.max(0, ...renewals.filter((w) => w.at < t.healed).map((w) => w.at));
  const deadline = renewed + t.renewDeadlineMs;
  const reacquired = Math.min(...renewals.filter((w) => w.at >= t.healed).map((w) => w.at));
  const acting = writes.filter((w) => !isLeaderLease(w) && w.at > deadline && w.at < reacquired);
  const line = logs.find(
    (l) => (l.msg === "lost leader lease" || l.msg === "stopped leading") && Date.parse(l.time) >= t.cut,
  );
  return {
    renewed,
    deadline,
    reacquired,
    stopped: line ? Date.parse(line.time) : undefined,
    acting,
    afterHeal: acting.filter((w) => w.at >= t.healed),
    during: writes.filter((w) => w.at > t.cut + RECEIVED_LAG_MS && w.at < t.healed),
  };
}
