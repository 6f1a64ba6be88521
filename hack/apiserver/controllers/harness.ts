// Shared set-up for the controllers' tests: a real API test server without its own controllers,
// our controllers started against it (watching its store, writing over HTTP), and small builders.
import { AppsV1Api, CoreV1Api, KubeConfig, PolicyV1Api, type V1Pod, type V1ReplicaSet } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../index.js";
import { startControllers, type ControllerOptions, type RunningControllers } from "./index.js";
import type { StoreSource } from "./informers.js";

export interface Harness {
  server: TestApiServer;
  controllers: RunningControllers;
  core: CoreV1Api;
  apps: AppsV1Api;
  policy: PolicyV1Api;
  /** Every error the controllers reported, in order. */
  errors: Error[];
  /** Holds back the pod events the controllers see (a lagging watch) until called with false. */
  lagPods(on: boolean): void;
  stop(): Promise<void>;
}

export async function startHarness(opts: Partial<ControllerOptions> = {}): Promise<Harness> {
  const server = await startApiServer({ controllers: false });
  const errors: Error[] = [];
  let lagging = false;
  const held: Array<() => void> = [];
  const store: StoreSource = {
    map: server.store.map,
    subscribe: (listener) =>
      server.store.subscribe((e) =>
        lagging && e.resource === "/pods" ? void held.push(() => listener(e)) : listener(e),
      ),
  };
  try {
    const controllers = await startControllers({
      store,
      onError: (e) => errors.push(e),
      kubeconfig: server.kubeconfig("controller-manager"),
      simulateKubelet: true,
      podCidr: "127.0.10.0/24",
      replicaSet: true,
      podDisruptionBudget: true,
      endpointSlice: true,
      ...opts,
    });
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig());
    return {
      server,
      controllers,
      core: kc.makeApiClient(CoreV1Api),
      apps: kc.makeApiClient(AppsV1Api),
      policy: kc.makeApiClient(PolicyV1Api),
      errors,
      lagPods: (on) => {
        lagging = on;
        if (!on) held.splice(0).forEach((deliver) => deliver());
      },
      stop: async () => {
        await controllers.stop();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

let counter = 0;
/** A fresh namespace per test keeps tests independent on one server. */
export async function freshNamespace(h: Harness, prefix = "t"): Promise<string> {
  counter++;
  const name = `${prefix}-${counter}-${Math.random().toString(36).slice(2, 6)}`;
  await h.core.createNamespace({ body: { metadata: { name } } });
  return name;
}

export function aReplicaSet(
  opts: { name?: string; replicas?: number; labels?: Record<string, string>; minReadySeconds?: number } = {},
): V1ReplicaSet {
  const labels = opts.labels ?? { app: "web" };
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: opts.name ?? "web" },
    spec: {
      replicas: opts.replicas ?? 3,
      ...(opts.minReadySeconds !== undefined ? { minReadySeconds: opts.minReadySeconds } : {}),
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: "app", image: "nginx:1.27", ports: [{ containerPort: 8080 }] }] },
      },
    },
  };
}

export function aPod(opts: { name: string; labels?: Record<string, string>; finalizers?: string[] }): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: opts.name,
      labels: opts.labels ?? { app: "web" },
      ...(opts.finalizers ? { finalizers: opts.finalizers } : {}),
    },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
  };
}

export const isReady = (p: V1Pod): boolean =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** Marks a pod not ready through the status subresource, as a failing readiness probe would. */
export async function markNotReady(h: Harness, namespace: string, name: string): Promise<void> {
  await retryOnConflict(async () => {
    const pod = await h.core.readNamespacedPod({ name, namespace });
    pod.status!.conditions = (pod.status?.conditions ?? []).map((c) =>
      c.type === "Ready" || c.type === "ContainersReady"
        ? { ...c, status: "False", lastTransitionTime: new Date() }
        : c,
    );
    return h.core.replaceNamespacedPodStatus({ name, namespace, body: pod });
  });
}

export async function podsOf(h: Harness, namespace: string): Promise<V1Pod[]> {
  return (await h.core.listNamespacedPod({ namespace })).items;
}

/** client-go's RetryOnConflict: read, change, write again while the controllers write the same object. */
export async function retryOnConflict<T>(attempt: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if ((err as { code?: number }).code !== 409 || i >= attempts) throw err;
    }
  }
}

export async function updateReplicaSet(
  h: Harness,
  namespace: string,
  name: string,
  change: (rs: V1ReplicaSet) => void,
): Promise<V1ReplicaSet> {
  return retryOnConflict(async () => {
    const rs = await h.apps.readNamespacedReplicaSet({ name, namespace });
    change(rs);
    return h.apps.replaceNamespacedReplicaSet({ name, namespace, body: rs });
  });
}
