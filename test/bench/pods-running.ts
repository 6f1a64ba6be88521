// Waiting for the kubelet stand-in to start many pods, without listing every pod on each look:
// its status writes are counted in the request log, and only once there are enough of them is
// the store listed to see that every pod is Running with an address and Ready.
import type { TestApiServer } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";

export interface PodView {
  name: string;
  ip: string;
}

export type PlainPod = {
  metadata: { name: string };
  status?: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }> };
};

const PODS = { group: "", version: "v1", resource: "pods" };

const isRunning = (p: PlainPod): boolean =>
  p.status?.phase === "Running" &&
  Boolean(p.status.podIP) &&
  (p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false);

/** The pods that are Running with an address and Ready. */
export function runningIn(pods: readonly PlainPod[]): PodView[] {
  const out: PodView[] = [];
  for (const p of pods) if (isRunning(p)) out.push({ name: p.metadata.name, ip: p.status!.podIP! });
  return out;
}

/** The namespace's (undefined: every namespace's) pods that are Running with an address and Ready. */
export function runningPods(server: TestApiServer, namespace: string | undefined): PodView[] {
  return runningIn(server.store.list(PODS, namespace) as PlainPod[]);
}

/** Waits until `pods` pods of the namespace (undefined: of every namespace) run with an address and Ready; resolves to the successful pod status writes seen. */
export async function waitForRunningPods(
  server: TestApiServer,
  namespace: string | undefined,
  pods: number,
  timeoutMs: number,
): Promise<number> {
  const log = server.requestLog;
  let seen = 0;
  let statusWrites = 0;
  await waitFor(
    () => {
      for (; seen < log.length; seen++) {
        const e = log[seen]!;
        if (
          e.resource === "pods" &&
          e.subresource === "status" &&
          (namespace ?? e.namespace) === e.namespace &&
          e.code === 200
        )
          statusWrites++;
      }
      // Counted in place: copying ten thousand pods every look would be the benchmark's own cost.
      return statusWrites >= pods && server.store.count(PODS, namespace, (p) => isRunning(p as PlainPod)) === pods;
    },
    { what: `${pods} pods to run with an address and Ready`, timeoutMs, intervalMs: 100 },
  );
  return statusWrites;
}
