// One operator replica in-process: the real startOperator on the simulation's fake clock,
// talking to the API test server through a TCP relay of its own. Cutting the relay is a crash:
// from that instant none of the replica's requests reach the API (no lease hand-over, no last
// writes), as when the process dies; then its remains are stopped in the background.
import { createServer, connect, type Server, type Socket } from "node:net";
import { Writable } from "node:stream";
import { startOperator, type RunningOperator } from "../../operator/src/operator.js";
import type { Clock } from "../../operator/src/runtime/clock.js";
import { parseConfig } from "../../operator/src/runtime/config.js";
import { createLogger } from "../../operator/src/runtime/logger.js";
import { kubeconfigYaml } from "../../hack/apiserver/kubeconfig.js";

export type Failpoint = "after-charge" | "after-evict";

export interface ReplicaOptions {
  apiUrl: string;
  /** The API user, which is also the request log's user: one per replica incarnation. */
  user: string;
  clock: Clock;
  leaderElect: boolean;
  /** Namespaces sharded across the replicas (--shards=on), with the timings below. */
  shards?: boolean;
  maxReplacementsPer12h: number;
  maxReplacementsPer12hPerNamespace?: number;
  /** Crash when the operator reaches this point. */
  failpoint?: Failpoint;
}

export const LEASE_MS = 4_000;
export const RENEW_MS = 3_000;
export const RETRY_MS = 1_000;
/** Shard timings on the same scale as the leader Lease's (the Lease stores whole seconds). */
export const SHARD_FLAGS = [
  "--shard-lease-duration",
  "4s",
  "--shard-renew-deadline",
  "3s",
  "--shard-retry-period",
  "1s",
  "--shard-skew-margin",
  "1s",
];
export const SHARD_LEASE_MS = 4_000;
export const SHARD_SKEW_MS = 1_000;
export const SHARD_RETRY_MS = 1_000;
/** Real ms a graceful stop may take before it counts as a crash. */
const STOP_DEADLINE_MS = 5_000;

/** Thrown at a failpoint to abort the reconcile that reached it, at the moment of the crash. */
export class SimulatedCrash extends Error {}

export class Replica {
  crashed = false;
  private remains: Promise<void> = Promise.resolve();
  /** Set when a failpoint fired. */
  crashedAt: Failpoint | undefined;

  private constructor(
    readonly user: string,
    private readonly relay: Relay,
    private op: RunningOperator | undefined,
    /** The replica's last log lines (pino JSON), for a failing seed's evidence. */
    readonly logs: string[],
  ) {}

  static async start(o: ReplicaOptions): Promise<Replica> {
    const relay = await Relay.open(o.apiUrl);
    const flags = [
      "--metrics-bind-address",
      "0",
      "--health-probe-bind-address",
      "0",
      "--operator-namespace",
      "healthprobe-system",
    ];
    flags.push("--max-replacements-per-12h", String(o.maxReplacementsPer12h));
    if (o.maxReplacementsPer12hPerNamespace !== undefined)
      flags.push("--max-replacements-per-12h-per-namespace", String(o.maxReplacementsPer12hPerNamespace));
    if (o.leaderElect) flags.push("--leader-elect");
    if (o.shards) flags.push("--shards", "on", ...SHARD_FLAGS);
    const parsed = parseConfig(flags, {});
    if (!parsed.ok) throw new Error(parsed.message);
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        if (logs.length > 400) logs.splice(0, 100);
        cb();
      },
    });
    // The failpoint fires from inside the operator, after this function returned the replica.
    const self: { replica?: Replica } = {};
    const failpoint = o.failpoint;
    const op = await startOperator(parsed.config, {
      kubeconfigYaml: kubeconfigYaml(relay.url, o.user),
      logger: createLogger({ level: "debug", destination: sink }),
      clock: o.clock,
      identity: o.user,
      workers: 4,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
      ...(failpoint
        ? {
            failpoint: (point: Failpoint) => {
              const replica = self.replica;
              if (point !== failpoint || !replica || replica.crashed) return;
              replica.crashedAt = point;
              replica.crash();
              throw new SimulatedCrash(`simulated crash at ${point}`);
            },
          }
        : {}),
    });
    self.replica = new Replica(o.user, relay, op, logs);
    return self.replica;
  }

  /** Caches synced (workers running). */
  isReady(): boolean {
    return !this.crashed && (this.op?.isReady() ?? false);
  }

  /** With shards on: whether this replica acts on the namespace now. */
  owns(namespace: string): boolean {
    return !this.crashed && (this.op?.ownedNamespaces()?.includes(namespace) ?? false);
  }

  isLeader(): boolean {
    return !this.crashed && (this.op?.isLeader() ?? false);
  }

  /** Keys added to the work queue and reconciles finished: equal when the replica is idle. */
  async queueCounts(): Promise<{ adds: number; done: number }> {
    if (!this.op || this.crashed) return { adds: 0, done: 0 };
    const reg = this.op.metrics.registry;
    // Every queue's adds against every controller's finished reconciles.
    const adds =
      (await reg.getSingleMetric("healthprobe_workqueue_adds_total")?.get())?.values.reduce((n, v) => n + v.value, 0) ??
      0;
    const hist = await reg.getSingleMetric("healthprobe_reconcile_duration_seconds")?.get();
    const done =
      hist?.values
        .filter((v) => (v as { metricName?: string }).metricName?.endsWith("_count"))
        .reduce((n, v) => n + v.value, 0) ?? 0;
    return { adds, done };
  }

  /** Dies at once: nothing more reaches the API; what is left is stopped in the background. */
  crash(): void {
    if (this.crashed) return;
    this.crashed = true;
    this.relay.cut();
    const op = this.op;
    this.op = undefined;
    this.remains = op?.stop().catch(() => undefined) ?? Promise.resolve();
  }

  /** Resolves once what a crash left running has stopped (or after a real deadline). */
  async buried(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_DEADLINE_MS)));
    await Promise.race([this.remains, deadline]);
    clearTimeout(timer);
  }

  /** A graceful stop: the lease is handed over, in-flight reconciles finish. */
  async stop(): Promise<void> {
    if (this.crashed) return;
    this.crashed = true;
    const op = this.op;
    this.op = undefined;
    // A stop that hangs (it waits for in-flight work) ends as a crash after a real deadline.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_DEADLINE_MS)));
    try {
      await Promise.race([op?.stop().catch(() => undefined), deadline]);
    } finally {
      clearTimeout(timer);
      this.relay.cut();
    }
  }
}

/** A TCP relay to the API server that can be cut: every connection reset, new ones refused. */
class Relay {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly sockets: Set<Socket>,
  ) {}

  static async open(apiUrl: string): Promise<Relay> {
    const target = new URL(apiUrl);
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as { port: number }).port;
    return new Relay(server, `http://127.0.0.1:${port}`, sockets);
  }

  cut(): void {
    this.server.close();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}
