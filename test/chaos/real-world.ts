// The simulation's World read from a real API server over HTTPS (pods, Services, the operator's
// EndpointSlices, policies, as plain JSON), and the simulation's invariants that apply to a
// wall-clock run judged over it, with evictions taken from the fault proxies' logs.
import { request } from "node:https";
import { parse } from "yaml";
import type { StoreReader } from "../../hack/apiserver/index.js";
import type { ProxyLogEntry } from "../../hack/fault-proxy/fault-proxy.js";
import { drainCap, neverDark, quarantineWithinCap } from "../simulation/invariants/routing.js";
import { operatorBudget, policyBudgets } from "../simulation/invariants/replacement.js";
import type { Invariant } from "../simulation/invariants/types.js";
import type { EvictionRecord, Snapshot, World } from "../simulation/snapshot.js";
import { readWorld } from "../simulation/world-reader.js";

export const CHAOS_INVARIANTS: readonly Invariant[] = [
  neverDark,
  drainCap,
  quarantineWithinCap,
  policyBudgets,
  operatorBudget,
];

type Obj = Record<string, any>;

function getJson(url: string, token: string, path: string): Promise<Obj> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      {
        headers: { authorization: `Bearer ${token}`, accept: "application/json" },
        rejectUnauthorized: false,
        timeout: 5_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Obj)
            : reject(new Error(`GET ${path}: ${res.statusCode}`)),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${path}: timed out`)));
    req.on("error", reject);
    req.end();
  });
}

const PATHS: Record<string, (ns: string) => string> = {
  pods: (ns) => `/api/v1/namespaces/${ns}/pods`,
  services: (ns) => `/api/v1/namespaces/${ns}/services`,
  endpointslices: (ns) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
  healthprobepolicies: (ns) => `/apis/healthprobe.io/v1alpha1/namespaces/${ns}/healthprobepolicies`,
};

export class RealWorldReader {
  private readonly url: string;
  private readonly token: string;

  constructor(adminKubeconfig: string) {
    const kc = parse(adminKubeconfig) as Obj;
    this.url = kc.clusters[0].cluster.server;
    this.token = kc.users[0].user.token;
  }

  /** The namespace's objects now, or undefined while the API server cannot answer. */
  async read(namespace: string): Promise<World | undefined> {
    try {
      const lists = await Promise.all(
        Object.entries(PATHS).map(
          async ([r, p]) => [r, (await getJson(this.url, this.token, p(namespace))).items as Obj[]] as const,
        ),
      );
      const byResource = new Map(lists);
      const store = {
        list: (gvr: { resource: string }) => byResource.get(gvr.resource) ?? [],
      } as unknown as StoreReader;
      return readWorld(store, namespace, Date.now());
    } catch {
      return undefined;
    }
  }
}

/** Evictions and pod deletes the proxies forwarded, as the budget invariants count them. */
export function evictionsFrom(logs: ProxyLogEntry[], namespace: string, before: World): EvictionRecord[] {
  return logs
    .filter(
      (e) =>
        e.forwarded &&
        e.namespace === namespace &&
        e.resource === "pods" &&
        ((e.verb === "create" && e.subresource === "eviction") || (e.verb === "delete" && e.subresource === "")),
    )
    .map((e) => ({
      at: e.start,
      user: e.proxy,
      namespace,
      pod: e.name,
      code: e.code,
      verb: e.verb === "delete" ? "delete" : "evict",
      before,
    }));
}

/**
 * Checks the chaos invariants over one world; `everInRotation` accumulates pods seen ready in
 * slices. `maxReplacementsPer12h`: the operator's --max-replacements-per-12h.
 */
export function checkWorld(
  world: World,
  everInRotation: Record<string, string[]>,
  evictions: EvictionRecord[],
  step: number,
  maxReplacementsPer12h = 3,
): string[] {
  for (const s of world.slices) {
    const seen = new Set(everInRotation[s.service] ?? []);
    for (const e of s.endpoints) if (e.ready) seen.add(e.pod);
    everInRotation[s.service] = [...seen];
  }
  const snapshot: Snapshot = {
    step,
    world,
    previous: undefined,
    evictions,
    probes: [],
    modeChanges: [],
    probingStarts: [],
    everInRotation,
    operatorUp: true,
    settled: false,
    maxReplacementsPer12h,
  };
  return CHAOS_INVARIANTS.flatMap((inv) => inv.check(snapshot).map((e) => `${inv.name}: ${e}`));
}
