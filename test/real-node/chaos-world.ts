// What the real-node chaos suites judge: the simulation's World sampled from the API server
// through the host's bridge, the operator's evictions and pod deletes from kube-apiserver's audit
// log (each with the last world sampled before it), and the chaos invariants over every sample.
// The operator is a user of the node's token file (OPERATOR_USER) when run as a process, or its
// chart's ServiceAccount when it runs in its pods.
import { checkWorld, RealWorldReader } from "../chaos/real-world.js";
import type { EvictionRecord, World } from "../simulation/snapshot.js";
import { readAuditLog } from "../../hack/control-plane/audit.js";

/** The operator's kubeconfig user (hack/control-plane/real-node/cluster.ts). */
export const OPERATOR_USER = "operator";

/** Metadata of every pod create, eviction or delete `user` sends; nothing else. */
export const auditPolicyFor = (user: string) => ({
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived"],
  rules: [
    {
      level: "Metadata",
      users: [user],
      verbs: ["create", "delete"],
      resources: [{ group: "", resources: ["pods", "pods/eviction"] }],
    },
    { level: "None" },
  ],
});

/** The audit policy for the operator run as a process. */
export const AUDIT_POLICY = auditPolicyFor(OPERATOR_USER);

/** An eviction or pod delete the operator (`user`) sent, as the audit log recorded it once answered. */
export interface Removal {
  at: number;
  pod: string;
  namespace: string;
  verb: "evict" | "delete";
  code: number;
}

export function removalsIn(auditLog: string, user = OPERATOR_USER): Removal[] {
  const out: Removal[] = [];
  for (const e of readAuditLog(auditLog)) {
    const ref = e.objectRef ?? {};
    if (e.stage !== "ResponseComplete" || e.user?.username !== user || ref.resource !== "pods") continue;
    const evict = e.verb === "create" && ref.subresource === "eviction";
    const del = e.verb === "delete" && !ref.subresource;
    if (!evict && !del) continue;
    out.push({
      at: Date.parse(e.requestReceivedTimestamp ?? ""),
      pod: ref.name ?? "",
      namespace: ref.namespace ?? "",
      verb: evict ? "evict" : "delete",
      code: e.responseStatus?.code ?? 0,
    });
  }
  return out;
}

/** Samples the namespace's world every 250 ms and checks the chaos invariants on each sample. */
export class WorldWatch {
  readonly violations: string[] = [];
  samples = 0;
  last: World | undefined;
  private readonly history: World[] = [];
  private readonly everInRotation: Record<string, string[]> = {};
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly reader: RealWorldReader,
    private readonly namespace: string,
    private readonly auditLog: string,
    private readonly maxReplacementsPer12h: number,
    private readonly user = OPERATOR_USER,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** The operator's removals in the namespace, each with the last world sampled before it that still held the pod. */
  evictions(): EvictionRecord[] {
    return removalsIn(this.auditLog, this.user)
      .filter((r) => r.namespace === this.namespace)
      .map((r) => {
        const before = this.history.filter((w) => w.at <= r.at);
        const world = before.findLast((w) => w.pods.some((p) => p.name === r.pod)) ?? before.at(-1) ?? this.history[0]!;
        return {
          at: r.at,
          user: this.user,
          namespace: r.namespace,
          pod: r.pod,
          code: r.code,
          verb: r.verb,
          before: world,
        };
      });
  }

  private async run(): Promise<void> {
    for (let step = 0; this.running; step++) {
      const world = await this.reader.read(this.namespace);
      if (world) {
        this.last = world;
        this.history.push(world);
        this.samples++;
        for (const v of checkWorld(world, this.everInRotation, this.evictions(), step, this.maxReplacementsPer12h)) {
          if (this.violations.length < 50) this.violations.push(`${new Date(world.at).toISOString()} ${v}`);
        }
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
