// The API calls of diagnostics before a replacement: a fresh read of the pod (conditions and
// container statuses, which the slim pod cache drops), its container logs (through
// kube-apiserver, which proxies to the node's kubelet), its Events, and the ConfigMaps that keep
// them. Every read takes an AbortSignal: the capture has a hard deadline and a slow kubelet must
// not hold a replacement.
import type { CapturedEvent, DiagnosticsConfigMap } from "../domain/diagnostics.js";
import { FIELD_MANAGER } from "./cluster-writer.js";
import type { KubeClient } from "./kube-client.js";
import { statusCodeOf, statusOf } from "./kube-errors.js";

export interface PodSnapshot {
  containers: string[];
  /** Restart count per container, from its status. */
  restarts: Map<string, number>;
  status: { conditions?: unknown[]; containerStatuses?: unknown[] };
}

/** What is written of a capture: everything but its list of problems. */
export type DiagnosticsConfigMapBody = Omit<DiagnosticsConfigMap, "problems">;

interface PodJson {
  spec?: { containers?: Array<{ name: string }> };
  status?: { conditions?: unknown[]; containerStatuses?: Array<{ name: string; restartCount?: number }> };
}

interface EventJson {
  type?: string;
  reason?: string;
  note?: string;
  eventTime?: string;
  deprecatedLastTimestamp?: string;
  deprecatedFirstTimestamp?: string;
  deprecatedCount?: number;
  series?: { count?: number; lastObservedTime?: string };
  metadata?: { creationTimestamp?: string };
}

/** A failed call, worded for the capture's summary: "HTTP 500: <the server's message>" or the error's message. */
export function describeFailure(err: unknown): string {
  if ((err as { name?: string })?.name === "AbortError" || (err as { name?: string })?.name === "TimeoutError")
    return "aborted at the capture deadline";
  const code = statusCodeOf(err);
  const message = statusOf(err)?.message ?? (err instanceof Error ? err.message : String(err));
  return code !== undefined ? `HTTP ${code}: ${message}` : message;
}

/** Starts the call unless the signal has already ended; rejects when it aborts, whether or not the request noticed. */
function bounded<T>(call: () => Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
  const work = call();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

const podPath = (namespace: string, name: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

export class DiagnosticsApi {
  constructor(private readonly client: KubeClient) {}

  describeFailure(err: unknown): string {
    return describeFailure(err);
  }

  async readPod(namespace: string, name: string, signal: AbortSignal): Promise<PodSnapshot> {
    const pod = await bounded(() => this.client.request<PodJson>("GET", podPath(namespace, name), { signal }), signal);
    const statuses = pod.status?.containerStatuses ?? [];
    return {
      containers: (pod.spec?.containers ?? []).map((c) => c.name),
      restarts: new Map(statuses.map((s) => [s.name, s.restartCount ?? 0])),
      status: { conditions: pod.status?.conditions ?? [], containerStatuses: statuses },
    };
  }

  async readLog(
    namespace: string,
    name: string,
    container: string,
    opts: { previous: boolean; tailLines: number; limitBytes: number },
    signal: AbortSignal,
  ): Promise<string> {
    const query = { container, previous: opts.previous, tailLines: opts.tailLines, limitBytes: opts.limitBytes };
    return bounded(() => this.client.text(`${podPath(namespace, name)}/log`, query, signal), signal);
  }

  /** Events regarding the pod (by uid), through events.k8s.io as they are stored for both APIs. */
  async listPodEvents(namespace: string, uid: string, signal: AbortSignal): Promise<CapturedEvent[]> {
    const path = `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
    const list = await bounded(
      () =>
        this.client.request<{ items?: EventJson[] }>("GET", path, {
          query: { fieldSelector: `regarding.uid=${uid}` },
          signal,
        }),
      signal,
    );
    return (list.items ?? []).map((e) => {
      const at =
        e.series?.lastObservedTime ??
        e.deprecatedLastTimestamp ??
        e.eventTime ??
        e.deprecatedFirstTimestamp ??
        e.metadata?.creationTimestamp;
      const time = at === undefined ? undefined : Date.parse(at);
      return {
        time: time === undefined || Number.isNaN(time) ? undefined : time,
        type: e.type,
        reason: e.reason,
        note: e.note,
        count: e.series?.count ?? e.deprecatedCount,
      };
    });
  }

  /** Creates the ConfigMap; "exists" when one of that name is already there (a retried replacement of the same pod). */
  async createConfigMap(
    namespace: string,
    cm: DiagnosticsConfigMapBody,
    signal: AbortSignal,
  ): Promise<"created" | "exists"> {
    const body = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: cm.name,
        namespace,
        labels: cm.labels,
        annotations: cm.annotations,
        ownerReferences: cm.ownerReferences,
      },
      data: cm.data,
    };
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
    try {
      await bounded(
        () => this.client.request("POST", path, { body, query: { fieldManager: FIELD_MANAGER }, signal }),
        signal,
      );
      return "created";
    } catch (err) {
      if (statusCodeOf(err) === 409) return "exists";
      throw new Error(`creating ConfigMap ${namespace}/${cm.name}: ${describeFailure(err)}`, { cause: err });
    }
  }

  /** Deletes one ConfigMap with a uid precondition; already gone (404) or replaced (409) is success. */
  async deleteConfigMap(namespace: string, name: string, uid: string): Promise<void> {
    try {
      await this.client.delete(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`,
        { preconditions: { uid } },
      );
    } catch (err) {
      const code = statusCodeOf(err);
      if (code === 404 || code === 409) return;
      throw new Error(`deleting ConfigMap ${namespace}/${name}: ${describeFailure(err)}`, { cause: err });
    }
  }
}
