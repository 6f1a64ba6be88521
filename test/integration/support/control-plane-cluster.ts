// The integration suites' cluster on the real control plane (HEALTHPROBE_TEST_CLUSTER=real):
// kube-apiserver, etcd and kube-controller-manager from Go modules, the kubelet stand-in serving
// every pod's container ports inside the run's network namespace, and kube-apiserver's audit log
// as the request log, so the same assertions on requests read what the real server recorded.
import { readSync, openSync, closeSync, existsSync } from "node:fs";
import { startControlPlane, type ControlPlane } from "../../../hack/control-plane/control-plane.js";
import { auditEventsIn, type AuditEvent } from "../../../hack/control-plane/audit.js";
import type { PodServers } from "../../../hack/control-plane/pod-servers.js";
import type { RequestLogEntry } from "../../../hack/apiserver/index.js";
import { requestsInAudit } from "../../chart/rbac-audit.js";
import type { Farm, PodBehaviour } from "../../support/pod-farm.js";

/**
 * The users integration tests connect as, each an admin (as every user is on the API test server).
 * A test connecting as any other user fails at once, naming the list.
 */
export const CONTROL_PLANE_USERS = [
  "operator",
  "operator-a",
  "operator-b",
  "operator-c",
  "operator-d",
  "restarted",
  "fresh",
];

/**
 * Every request of the users above at Metadata level (no bodies), nothing of the control plane's
 * own components: the audit log then holds what the API test server's request log holds for them.
 */
const AUDIT_POLICY = {
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived"],
  rules: [{ level: "Metadata", users: CONTROL_PLANE_USERS }, { level: "None" }],
};

/** The audit log read as the request log: new lines are parsed as they come, earlier ones kept. */
class AuditRequestLog {
  private offset = 0;
  private partial = "";
  private readonly events: AuditEvent[] = [];
  /** The entries of `events`, made again only when new events came (tests read the log in polling loops). */
  private entriesOf: { count: number; entries: RequestLogEntry[] } = { count: 0, entries: [] };

  constructor(private readonly path: string) {}

  entries(): RequestLogEntry[] {
    if (existsSync(this.path)) {
      const fd = openSync(this.path, "r");
      try {
        const chunk = Buffer.alloc(1 << 20);
        for (let n; (n = readSync(fd, chunk, 0, chunk.length, this.offset)) > 0;) {
          this.offset += n;
          this.partial += chunk.toString("utf8", 0, n);
        }
      } finally {
        closeSync(fd);
      }
      const cut = this.partial.lastIndexOf("\n");
      if (cut >= 0) {
        this.events.push(...auditEventsIn(this.partial.slice(0, cut)));
        this.partial = this.partial.slice(cut + 1);
      }
    }
    if (this.entriesOf.count !== this.events.length)
      this.entriesOf = { count: this.events.length, entries: requestsInAudit(this.events) };
    return this.entriesOf.entries;
  }
}

/**
 * The pods' servers inside the network namespace, where the kubelet stand-in started one on each
 * container port. Commands go in order over one pipe; the first failure is thrown by the next
 * call that waits.
 */
class NetnsFarm implements Farm {
  private last: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;

  constructor(private readonly servers: PodServers) {}

  private queue<T>(op: () => Promise<T>): Promise<T> {
    const next = this.last.then(op);
    this.last = next.catch((err: Error) => {
      this.failure ??= err;
    });
    return next;
  }

  private async settled(): Promise<void> {
    await this.last;
    if (this.failure) throw this.failure;
  }

  /** The kubelet stand-in serves each container port already: this serves another, or one a test stopped. */
  async serve(ip: string, port = 8080): Promise<void> {
    await this.settled();
    await this.servers.listen(ip, port).catch((err: Error) => {
      if (!/EADDRINUSE/.test(err.message)) throw err;
    });
  }

  async stop(ip: string): Promise<void> {
    await this.queue(() => this.servers.close(ip));
    await this.settled();
  }

  set(ip: string, behaviour: PodBehaviour): void {
    void this.queue(() => this.servers.set(ip, behaviour)).catch(() => undefined);
  }

  setPath(ip: string, path: string, behaviour: PodBehaviour): void {
    void this.queue(() => this.servers.set(ip, behaviour, path)).catch(() => undefined);
  }

  healthy(ip: string): void {
    this.set(ip, { status: 200, body: "ok" });
  }

  failing(ip: string): void {
    this.set(ip, { status: 503, body: "unavailable" });
  }

  async hitsOf(ip: string): Promise<number> {
    await this.settled();
    return this.servers.hits(ip);
  }

  async sawHeaderValue(ip: string, value: string): Promise<boolean> {
    await this.settled();
    return this.servers.sawHeaderValue(ip, value);
  }

  /** The servers belong to the control plane's kubelet, which closes them with their pods. */
  async close(): Promise<void> {
    await this.settled();
  }
}

export interface ControlPlaneCluster {
  cp: ControlPlane;
  requestLog(): RequestLogEntry[];
  newFarm(): Farm;
}

export async function startControlPlaneCluster(): Promise<ControlPlaneCluster> {
  const users = Object.fromEntries(CONTROL_PLANE_USERS.map((u) => [u, ["system:masters"]]));
  const cp = await startControlPlane({ users, auditPolicy: AUDIT_POLICY });
  const log = new AuditRequestLog(cp.auditLog!);
  return { cp, requestLog: () => log.entries(), newFarm: () => new NetnsFarm(cp.podServers) };
}
