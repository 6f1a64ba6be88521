// The workload the real-node chaos suites act on, and what they check on it, whichever way the
// operator runs (a process from source, chaos.test.ts; its pods installed by helm,
// pod-failpoints.test.ts): a Deployment of workload pods behind a selector-less Service, a policy
// that drains and replaces (after 30 s, the shortest window the schema allows) within a budget,
// the simulation's World sampled from the API server with the chaos invariants on every sample
// (WorldWatch), the two ledgers (the policy's ledger ConfigMap and the operator-wide one)
// and the operator's removals from kube-apiserver's audit log.
import { expect } from "@jest/globals";
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type V1Pod } from "@kubernetes/client-node";
import type { RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { policyLedgerName } from "../../operator/src/domain/policy-ledger.js";
import { RealWorldReader } from "../chaos/real-world.js";
import type { World } from "../simulation/snapshot.js";
import type { Obj } from "../support/kube-objects.js";
import { waitFor } from "../support/wait-for.js";
import { postScript, WORKLOAD_IMAGE } from "../support/workload-control.js";
import { OPERATOR_USER, removalsIn, WorldWatch } from "./chaos-world.js";

export const OPERATOR_NS = "healthprobe-system";
const LEDGER_CONFIGMAP = "healthprobe-operator-ledger";
export const CONVERGE_MS = 150_000;

export interface ReplacementChaosOptions {
  namespace: string;
  replicas: number;
  /** The policy's maxPerHour and maxPerDay, and the operator-wide cap the invariants judge by. */
  budget: number;
  /** Who the operator is in the audit log. */
  user?: string;
}

export interface Victim {
  name: string;
  uid: string;
  /** Its ReplicaSet. */
  owner: string;
  /** The uids of the Deployment's live pods when it was picked. */
  before: Set<string>;
}

const deployment = (ns: string, replicas: number): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: ns },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: "web",
            image: WORKLOAD_IMAGE,
            imagePullPolicy: "Never",
            ports: [{ name: "http", containerPort: 8080 }],
            env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
          },
        ],
      },
    },
  },
});

const policy = (ns: string, budget: number): Obj => ({
  apiVersion: "healthprobe.io/v1alpha1",
  kind: "HealthProbePolicy",
  metadata: { name: "web", namespace: ns },
  spec: {
    serviceName: "web",
    selector: { matchLabels: { app: "web" } },
    probe: { type: "HTTP", port: "http", path: "/healthz", periodSeconds: 1, timeoutSeconds: 1 },
    evaluation: { failureThreshold: 2, successThreshold: 1 },
    drain: { enabled: true, method: "EndpointSlice", maxUnhealthyPercent: 50 },
    replacement: { enabled: true, after: "30s", maxPerHour: budget, maxPerDay: budget },
  },
});

export class ReplacementChaos {
  readonly core: CoreV1Api;
  readonly objects: KubernetesObjectApi;
  readonly watch: WorldWatch;
  /** The uids of the pods replaced so far, in order. */
  readonly replaced: string[] = [];
  private readonly ns: string;
  private readonly user: string;

  constructor(
    private readonly node: RealNodeCluster,
    private readonly o: ReplacementChaosOptions,
  ) {
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    this.core = kc.makeApiClient(CoreV1Api);
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.ns = o.namespace;
    this.user = o.user ?? OPERATOR_USER;
    this.watch = new WorldWatch(new RealWorldReader(node.kubeconfig()), this.ns, node.auditLog!, o.budget, this.user);
  }

  /** The namespace, the Service, the Deployment and the policy (the CRD must be installed); starts the watch. */
  async setUp(): Promise<void> {
    await this.objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: this.ns } });
    await this.objects.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: this.ns },
      spec: { ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
    } as Obj);
    await this.objects.create(deployment(this.ns, this.o.replicas));
    await this.objects.create(policy(this.ns, this.o.budget));
    this.watch.start();
  }

  /** The Deployment's live pods in `w`, by name. */
  livePods(w: World): World["pods"] {
    return w.pods.filter((p) => p.labels.app === "web" && !p.terminating).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Whether `w` routes as it should with exactly `drained` out: every replica live and
   * kubelet-Ready, the slices ready for every one but `drained`, and the status agreeing (drained
   * ones Unhealthy, the others Healthy).
   */
  routes(w: World | undefined, drained: readonly string[]): boolean {
    if (!w) return false;
    const pods = this.livePods(w);
    const ready = new Map(w.slices.flatMap((s) => s.endpoints.map((e) => [e.pod, e.ready] as const)));
    const status = w.policies[0]?.status;
    return (
      pods.length === this.o.replicas &&
      pods.every(
        (p) =>
          p.ready &&
          ready.get(p.name) === !drained.includes(p.name) &&
          status?.pods[p.name] === (drained.includes(p.name) ? "Unhealthy" : "Healthy"),
      ) &&
      status?.drained === drained.length
    );
  }

  /** When the watch first saw a world passing `check`. */
  until(check: (w: World | undefined) => boolean, what: string): Promise<number> {
    const w = this.watch;
    return waitFor(() => check(w.last) && w.last!.at, { timeoutMs: CONVERGE_MS, intervalMs: 100, what });
  }

  /** Switches the pod's /healthz to 503 or back, through its control endpoint. */
  async setHealth(pod: string, healthy: boolean): Promise<void> {
    const ip = this.watch.last!.pods.find((p) => p.name === pod)!.ip!;
    const [path, body] = healthy ? ["/reset", {}] : ["/set", { status: 503, body: "sick", path: "/healthz" }];
    await this.node.namespace.exec(process.execPath, ["-e", postScript(`http://${ip}:9901${path}`, body)]);
  }

  /** The policy's ledger (its ConfigMap) and the operator-wide one, as pod uids. */
  async ledgers(): Promise<{ policy: string[]; operator: string[] }> {
    const read = async (name: string, namespace: string) => {
      const cm = await this.core.readNamespacedConfigMap({ name, namespace }).catch(() => undefined);
      return (JSON.parse(cm?.data?.ledger ?? "[]") as Array<{ uid: string }>).map((e) => e.uid);
    };
    return {
      policy: await read(policyLedgerName("web"), this.ns),
      operator: await read(LEDGER_CONFIGMAP, OPERATOR_NS),
    };
  }

  /** The operator's evictions and deletes of the pod, as "<verb> <code>". */
  removalsOf(pod: string): string[] {
    return removalsIn(this.node.auditLog!, this.user)
      .filter((r) => r.namespace === this.ns && r.pod === pod)
      .map((r) => `${r.verb} ${r.code}`);
  }

  /** At a failpoint: the victim charged once in both ledgers, and the removals so far. */
  async expectChargedOnce(victim: Victim, removals: string[]): Promise<void> {
    const l = await this.ledgers();
    expect(l.policy.filter((u) => u === victim.uid)).toHaveLength(1);
    expect(l.operator.filter((u) => u === victim.uid)).toHaveLength(1);
    expect(this.removalsOf(victim.name)).toEqual(removals);
  }

  /** A pod in rotation to make sick: the first by name. */
  async pickVictim(): Promise<Victim> {
    const p = this.livePods(this.watch.last!)[0]!;
    const pod = await this.core.readNamespacedPod({ name: p.name, namespace: this.ns });
    return {
      name: p.name,
      uid: p.uid,
      owner: pod.metadata?.ownerReferences?.find((r) => r.controller)?.name ?? "",
      before: new Set(this.livePods(this.watch.last!).map((x) => x.uid)),
    };
  }

  replacedIn(w: World | undefined, victim: Victim): boolean {
    return !!w && !w.pods.some((p) => p.uid === victim.uid) && this.routes(w, []);
  }

  /** The victim gone, its ReplicaSet's new pod Running, Healthy and in rotation; checks it was evicted exactly once and charged once. */
  async expectReplacedOnce(victim: Victim): Promise<number> {
    const at = await this.until((w) => this.replacedIn(w, victim), `${victim.name} replaced and every pod in rotation`);
    this.replaced.push(victim.uid);
    expect(this.removalsOf(victim.name)).toEqual(["evict 201"]);
    const l = await this.ledgers();
    expect(l.policy.filter((u) => u === victim.uid)).toHaveLength(1);
    expect(l.operator.filter((u) => u === victim.uid)).toHaveLength(1);
    expect(new Set(l.policy)).toEqual(new Set(this.replaced));
    expect(new Set(l.operator)).toEqual(new Set(this.replaced));
    // Exactly one new pod, of the victim's ReplicaSet, Running (routes() saw it Healthy and in rotation).
    const pods = (await this.core.listNamespacedPod({ namespace: this.ns, labelSelector: "app=web" })).items.filter(
      (p: V1Pod) => !p.metadata?.deletionTimestamp,
    );
    const fresh = pods.filter((p) => !victim.before.has(p.metadata!.uid!));
    expect(fresh.map((p) => [p.metadata?.ownerReferences?.find((r) => r.controller)?.name, p.status?.phase])).toEqual([
      [victim.owner, "Running"],
    ]);
    return at;
  }

  holdsInvariants(): void {
    expect(this.watch.violations).toEqual([]);
  }

  /** Stops the watch; the invariants held, and the budget invariants judged every real eviction, each against a world that still held its pod. */
  async expectJudgedAll(): Promise<void> {
    await this.watch.stop();
    this.holdsInvariants();
    expect(this.watch.evictions().map((e) => e.before.pods.find((p) => p.name === e.pod)?.uid)).toEqual(this.replaced);
  }
}
