// What the Services' EndpointSlices say, kept current by a watch: per Service, each endpoint
// address and whether it is ready. `matches` says whether every Service has exactly the wanted
// endpoints with the wanted readiness.
import { Watch, type KubeConfig } from "@kubernetes/client-node";

interface SliceView {
  service: string;
  endpoints: Array<{ ip: string; ready: boolean }>;
}

/** Per Service, the wanted readiness by pod address. */
export type WantedEndpoints = Map<string, Map<string, boolean>>;

export interface SliceTracker {
  /** True when every Service's slices hold exactly the wanted addresses with the wanted readiness. */
  matches(wanted: WantedEndpoints): boolean;
  /** What differs, briefly: for an error message. */
  differences(wanted: WantedEndpoints): string[];
  /** Slice changes seen so far. */
  changes(): number;
  stop(): void;
}

/** `namespace` undefined: every namespace's slices (Service names are unique across the benchmark's namespaces). */
export async function trackSlices(kc: KubeConfig, namespace: string | undefined): Promise<SliceTracker> {
  const slices = new Map<string, SliceView>();
  let changes = 0;
  let resourceVersion: string | undefined;
  let stopped = false;
  /** Set when a 410 ends the watch on purpose: its end is no error to report. */
  let relisting = false;
  let controller: AbortController | undefined;
  type SliceEvent = {
    metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
    endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean } }>;
    code?: number;
  };
  const onEvent = (type: string, obj: SliceEvent) => {
    if (type === "ERROR") {
      // 410 Gone: the resourceVersion fell out of the watch cache (a long drain at 50,000 pods).
      // A watch without one starts with an ADDED event for every slice there is, so the view is
      // rebuilt from nothing; resuming at the old version would fail the same way for good.
      if (obj.code === 410) {
        resourceVersion = undefined;
        slices.clear();
        relisting = true;
        controller?.abort();
      }
      return;
    }
    resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
    if (type === "BOOKMARK") return;
    const name = obj.metadata?.name ?? "";
    changes++;
    if (type === "DELETED") slices.delete(name);
    if (type !== "ADDED" && type !== "MODIFIED") return;
    const service = obj.metadata?.labels?.["kubernetes.io/service-name"] ?? "";
    const endpoints = (obj.endpoints ?? []).flatMap((e) =>
      (e.addresses ?? []).map((ip) => ({ ip, ready: e.conditions?.ready === true })),
    );
    slices.set(name, { service, endpoints });
  };
  // client-node ends a watch quiet for 30 s, and an API server sends a quiet watch a bookmark about
  // once a minute: a watch that ends so (or any other way) resumes where it was.
  const start = async (): Promise<void> => {
    const query: Record<string, string | boolean> = { allowWatchBookmarks: true };
    if (resourceVersion) query.resourceVersion = resourceVersion;
    controller = await new Watch(kc).watch(
      namespace === undefined
        ? "/apis/discovery.k8s.io/v1/endpointslices"
        : `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
      query,
      onEvent,
      (err: unknown) => {
        if (stopped) return;
        const quiet = (err as Error | undefined)?.name === "TimeoutError";
        if (err && !relisting && !quiet)
          console.error(`endpointslice watch ended (${(err as Error).message}); resuming`);
        relisting = false;
        setTimeout(
          () => void start().catch((e: unknown) => console.error("resuming the endpointslice watch failed:", e)),
          100,
        );
      },
    );
  };
  await start();
  const byService = () => {
    const seen = new Map<string, Map<string, boolean>>();
    for (const s of slices.values()) {
      let m = seen.get(s.service);
      if (!m) seen.set(s.service, (m = new Map()));
      for (const e of s.endpoints) m.set(e.ip, e.ready);
    }
    return seen;
  };
  return {
    differences(wanted) {
      const seen = byService();
      const out: string[] = [];
      for (const [service, want] of wanted) {
        const got = seen.get(service) ?? new Map<string, boolean>();
        const missing = [...want.keys()].filter((ip) => !got.has(ip)).length;
        const extra = [...got.keys()].filter((ip) => !want.has(ip)).length;
        const wrong = [...want]
          .filter(([ip, r]) => got.has(ip) && got.get(ip) !== r)
          .map(([ip, r]) => `${ip} ready=${got.get(ip)} want ${r}`);
        if (missing || extra || wrong.length)
          out.push(
            `${service}: ${missing} missing, ${extra} extra, ${wrong.length} wrong (${wrong.slice(0, 3).join(", ")})`,
          );
      }
      return out;
    },
    matches(wanted) {
      const seen = new Map<string, Map<string, boolean>>();
      for (const s of slices.values()) {
        let m = seen.get(s.service);
        if (!m) seen.set(s.service, (m = new Map()));
        for (const e of s.endpoints) {
          if (m.has(e.ip)) return false; // the same address twice
          m.set(e.ip, e.ready);
        }
      }
      for (const [service, want] of wanted) {
        const got = seen.get(service);
        if (!got || got.size !== want.size) return false;
        for (const [ip, ready] of want) if (got.get(ip) !== ready) return false;
      }
      return true;
    },
    changes: () => changes,
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}
