// Watches the API as the simulation runs and turns it into snapshots: the eviction requests
// with the objects before each, which pods were ready in a Service's slices since they last joined it, when each
// replica started probing (its start, or taking the Lease), and the previous step's world.
import type { TestApiServer } from "../../hack/apiserver/index.js";
import type { Clock } from "../../operator/src/runtime/clock.js";
import type { Fleet } from "./fleet.js";
import { OPERATOR_USER_PREFIX } from "./fleet.js";
import type { PodServers } from "./pod-servers.js";
import {
  managingPolicy,
  slicesOf,
  targetsOf,
  type EvictionRecord,
  type ProbingStart,
  type Snapshot,
  type World,
} from "./snapshot.js";
import { readWorld, recordEvictions } from "./world-reader.js";

const LEASES = { group: "coordination.k8s.io", version: "v1", resource: "leases" };

export class Observer {
  readonly probingStarts: ProbingStart[] = [];
  readonly evictions: EvictionRecord[];
  private readonly everInRotation: Record<string, Set<string>> = {};
  private holder: string | undefined;
  private previous: World | undefined;

  constructor(
    private readonly server: TestApiServer,
    private readonly namespace: string,
    private readonly clock: Clock,
    private readonly servers: PodServers,
    private readonly maxReplacementsPer12h: number,
    private readonly maxReplacementsPer12hPerNamespace?: number,
  ) {
    this.evictions = recordEvictions(server.requestLog, server.store, namespace, (u) =>
      u.startsWith(OPERATOR_USER_PREFIX),
    );
  }

  world(): World {
    return readWorld(this.server.store, this.namespace, this.clock.now());
  }

  /** After each tick: which pods are in rotation, and who holds the Lease since when. */
  observe(): void {
    const world = this.world();
    for (const s of world.slices)
      for (const e of s.endpoints) if (e.ready) (this.everInRotation[s.service] ??= new Set()).add(e.pod);
    this.forgetLeavers(world);
    const lease = this.server.store.get(LEASES, "healthprobe-system", "healthprobe-operator") as
      { spec?: { holderIdentity?: string; acquireTime?: string } } | undefined;
    const h = lease?.spec?.holderIdentity;
    if (h && h !== this.holder)
      this.probingStarts.push({ user: h, at: Date.parse(lease?.spec?.acquireTime ?? "") || this.clock.now() });
    this.holder = h;
  }

  /**
   * A pod that has left a Service is new to it when it comes back (it warms up): it leaves when
   * the Service has no slices at all (no policy manages it, or it is gone), or when it is absent
   * from them while no policy managing the Service has it as a target (relabelled away, deleted).
   * A target the slices dropped stays remembered: dropping one would be the operator's doing
   * (seed 20799: a pod once in Service web, relabelled away while web had no policy, back later).
   */
  private forgetLeavers(world: World): void {
    for (const [service, pods] of Object.entries(this.everInRotation)) {
      const slices = slicesOf(world, service);
      const listed = new Set(slices.flatMap((s) => s.endpoints.map((e) => e.pod)));
      const policy = managingPolicy(world, service);
      const targets = new Set(policy ? targetsOf(world, policy).map((p) => p.name) : []);
      for (const pod of pods) if (slices.length === 0 || (!listed.has(pod) && !targets.has(pod))) pods.delete(pod);
    }
  }

  /** Whether a replica writes: the only one, or the one holding the Lease (as the API says), synced. */
  operatorUp(fleet: Fleet, leaderElect: boolean): boolean {
    const w = fleet.writer();
    return Boolean(w?.isReady() && (!leaderElect || this.holder === w.user));
  }

  snapshot(step: number, settled: boolean, operatorUp: boolean): Snapshot {
    const world = this.world();
    const snap: Snapshot = {
      step,
      world,
      previous: this.previous,
      evictions: this.evictions,
      probes: this.servers.hits,
      modeChanges: this.servers.modeChanges,
      probingStarts: this.probingStarts,
      everInRotation: Object.fromEntries(Object.entries(this.everInRotation).map(([k, v]) => [k, [...v]])),
      operatorUp,
      settled,
      maxReplacementsPer12h: this.maxReplacementsPer12h,
      ...(this.maxReplacementsPer12hPerNamespace !== undefined
        ? { maxReplacementsPer12hPerNamespace: this.maxReplacementsPer12hPerNamespace }
        : {}),
    };
    this.previous = world;
    return snap;
  }
}

/** One line: pods, each Service's endpoints and each policy's conditions. */
export function summary(world: World): string {
  const pods = world.pods.map(
    (p) => `${p.name}:${p.labels.app ?? "-"}${p.ready ? "R" : "N"}${p.ip ? "" : "?"}${p.terminating ? "T" : ""}`,
  );
  const services = world.services.map((s) => {
    const eps = world.slices
      .filter((x) => x.service === s.name)
      .flatMap((x) => x.endpoints.map((e) => `${e.pod}${e.ready ? "+" : "-"}`));
    return `${s.name}${s.hasSelector ? "(sel)" : ""}[${eps.join(" ")}]`;
  });
  const policies = world.policies.map((p) => {
    const conds = Object.entries(p.status.conditions)
      .filter(([, c]) => c.status === "True" || c.reason !== "")
      .map(([t, c]) => `${t}=${c.status === "True" ? "T" : "F"}${t === "Ready" ? `/${c.reason}` : ""}`);
    return `${p.name}->${p.serviceName}{${conds.join(",")}}`;
  });
  return `${pods.join(" ")} | ${services.join(" ")} | ${policies.join(" ")}`;
}
