// A cluster for integration tests: the project's API test server (kubelet stand-in on, pods on
// loopback IPs), or with HEALTHPROBE_TEST_CLUSTER=real the real control plane (pods in a network
// namespace of the run's own); the CRD applied, a namespace, and helpers that talk to it over real
// HTTP with @kubernetes/client-node, exactly as in a cluster.
import { randomInt } from "node:crypto";
import { CoreV1Api, KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import {
  startApiServer,
  type ApiServerOptions,
  type RequestLogEntry,
  type TestApiServer,
} from "../../../hack/apiserver/index.js";
import { waitFor } from "../../support/wait-for.js";
import { installCrd, objectClient, readinessOf, type Obj } from "../../support/kube-objects.js";
import { PodFarm, type Farm } from "../../support/pod-farm.js";
import { clusterKind } from "../../support/cluster-kind.js";
import { startControlPlaneCluster } from "./control-plane-cluster.js";

export { installCrd, loadCrd, readinessOf, type Obj } from "../../support/kube-objects.js";

/** What tests and operators connect through, on either cluster. */
export interface ClusterServer {
  /** Kubeconfig YAML for a user (any on the API test server; CONTROL_PLANE_USERS on the control plane). */
  kubeconfig(user?: string): string;
  writeKubeconfig(path: string, user?: string): void;
  /** Every request so far, in order: the API test server's request log, or kube-apiserver's audit log. */
  readonly requestLog: RequestLogEntry[];
}

export interface TestCluster {
  server: ClusterServer;
  /** The API test server, for what only it can do (faults, pod logs); throws on the real control plane, where such a test is skipped. */
  testServer(): TestApiServer;
  /** The pods' servers: on loopback, or the kubelet stand-in's inside the network namespace. */
  newFarm(): Farm;
  /** A bearer token of a ServiceAccount in `namespace`: its user name on the test server, a TokenRequest's token on the control plane. */
  serviceAccountToken(name: string): Promise<string>;
  api: KubernetesObjectApi;
  namespace: string;
  create(obj: Obj): Promise<Obj>;
  get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<Obj | undefined>;
  list(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<Obj[]>;
  patch(obj: Obj): Promise<Obj>;
  remove(apiVersion: string, kind: string, name: string, namespace?: string): Promise<void>;
  stop(): Promise<void>;
}

export function kubeConfigFor(server: Pick<ClusterServer, "kubeconfig">, user = "admin"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig(user));
  return kc;
}

const podCidrsTaken = new Set<string>();

/**
 * A loopback pod range of this cluster's own: test files run side by side in several jest
 * workers, beside simulations and demos, and two clusters handing out the same pod IP would
 * make their pod servers collide. Drawn at random among some 10,000 ranges (a range derived
 * from the pid met another process's one in 150), never one this process drew before; the
 * third octet is even, so a /23 fits too.
 */
export function uniquePodCidr(prefixLength: 23 | 24 = 24): string {
  for (;;) {
    const range = `127.${100 + randomInt(150)}.${120 + 2 * randomInt(67)}`;
    if (podCidrsTaken.has(range)) continue;
    podCidrsTaken.add(range);
    return `${range}.0/${prefixLength}`;
  }
}

/** A cluster on the API test server whatever the environment says: for the simulation, benchmarks and demo tools. */
export interface TestServerCluster extends TestCluster {
  server: TestApiServer;
}

type ClusterOptions = ApiServerOptions & { namespace?: string };

/** The cluster HEALTHPROBE_TEST_CLUSTER selects; options apply to the API test server only, except `namespace`. */
export async function startCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const { namespace = "shop", ...serverOpts } = opts;
  return prepare(
    clusterKind === "control-plane"
      ? await controlPlaneCluster(namespace)
      : await testServerCluster(namespace, serverOpts),
  );
}

export async function startTestServerCluster(opts: ClusterOptions = {}): Promise<TestServerCluster> {
  const { namespace = "shop", ...serverOpts } = opts;
  return prepare(await testServerCluster(namespace, serverOpts));
}

async function prepare<C extends TestCluster>(cluster: C): Promise<C> {
  const { namespace } = cluster;
  await installCrd(cluster.api);
  await cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  // Where the operator keeps its Lease and operator-wide ledger.
  await cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "healthprobe-system" } });
  return cluster;
}

async function testServerCluster(namespace: string, opts: ApiServerOptions): Promise<TestServerCluster> {
  const server = await startApiServer({ simulateKubelet: true, ...opts, podCidr: opts.podCidr ?? uniquePodCidr() });
  const api = KubernetesObjectApi.makeApiClient(kubeConfigFor(server));
  return {
    server,
    testServer: () => server,
    newFarm: () => new PodFarm(),
    serviceAccountToken: async (name) => `system:serviceaccount:${namespace}:${name}`,
    api,
    namespace,
    ...objectClient(api, namespace),
    stop: () => server.stop(),
  };
}

async function controlPlaneCluster(namespace: string): Promise<TestCluster> {
  const { cp, requestLog, newFarm } = await startControlPlaneCluster();
  const server: ClusterServer = {
    kubeconfig: (user) => cp.kubeconfig(user),
    writeKubeconfig: (path, user) => cp.writeKubeconfig(path, user),
    get requestLog() {
      return requestLog();
    },
  };
  const api = KubernetesObjectApi.makeApiClient(kubeConfigFor(server));
  return {
    server,
    testServer: () => {
      throw new Error(
        "this test needs the API test server (faults, pod logs, its store): skip it on the control plane",
      );
    },
    newFarm,
    serviceAccountToken: async (name) => {
      const core = kubeConfigFor(server).makeApiClient(CoreV1Api);
      const review = await core.createNamespacedServiceAccountToken({
        name,
        namespace,
        body: { spec: { audiences: [], expirationSeconds: 3600 } },
      });
      return review.status!.token!;
    },
    api,
    namespace,
    ...objectClient(api, namespace),
    stop: () => cp.stop(),
  };
}

export function aService(
  name: string,
  namespace: string,
  opts: { targetPort?: number | string; selector?: Record<string, string> } = {},
): Obj {
  const spec: Record<string, unknown> = {
    ports: [{ name: "http", port: 80, targetPort: opts.targetPort ?? 8080, protocol: "TCP" }],
  };
  if (opts.selector) spec.selector = opts.selector;
  return { apiVersion: "v1", kind: "Service", metadata: { name, namespace }, spec };
}

export function aPod(
  name: string,
  namespace: string,
  opts: { labels?: Record<string, string>; ownerReferences?: unknown[]; port?: number } = {},
): Obj {
  const metadata: Record<string, unknown> = { name, namespace, labels: opts.labels ?? { app: "web" } };
  if (opts.ownerReferences) metadata.ownerReferences = opts.ownerReferences;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      containers: [
        {
          name: "app",
          image: "registry.example/web:1",
          ports: [{ name: "http", containerPort: opts.port ?? 8080, protocol: "TCP" }],
        },
      ],
    },
  };
}

/**
 * A ReplicaSet of `replicas` pods; `opts.gated`: its pods carry the readiness gate healthprobe.io/ready;
 * `opts.port`: their container port, where the control plane's kubelet stand-in serves (default 8080).
 */
export function aReplicaSet(
  name: string,
  namespace: string,
  replicas: number,
  labels: Record<string, string> = { app: "web" },
  opts: { gated?: boolean; port?: number } = {},
): Obj {
  const rs = aPlainReplicaSet(name, namespace, replicas, labels);
  if (opts.port) rs.spec.template.spec.containers[0].ports[0].containerPort = opts.port;
  if (opts.gated) rs.spec.template.spec.readinessGates = [{ conditionType: "healthprobe.io/ready" }];
  return rs;
}

function aPlainReplicaSet(name: string, namespace: string, replicas: number, labels: Record<string, string>): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: "app",
              image: "registry.example/web:1",
              ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
            },
          ],
        },
      },
    },
  };
}

export interface PolicyOptions {
  /** undefined: none (with method ReadinessGate); absent: "web". */
  serviceName?: string | undefined;
  method?: "EndpointSlice" | "ReadinessGate";
  selector?: Record<string, string>;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
  maxUnhealthyPercent?: number;
  dryRun?: boolean;
  replacement?: Record<string, unknown>;
  probe?: Record<string, unknown>;
  evaluation?: Record<string, unknown>;
  drain?: Record<string, unknown>;
}

export function aPolicy(name: string, namespace: string, o: PolicyOptions = {}): Obj {
  return {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name, namespace },
    spec: {
      ...("serviceName" in o && o.serviceName === undefined ? {} : { serviceName: o.serviceName ?? "web" }),
      selector: { matchLabels: o.selector ?? { app: "web" } },
      dryRun: o.dryRun ?? false,
      probe: {
        port: 8080,
        path: "/healthz",
        periodSeconds: o.periodSeconds ?? 1,
        timeoutSeconds: o.timeoutSeconds ?? 1,
        ...(o.probe ?? {}),
      },
      evaluation: {
        failureThreshold: o.failureThreshold ?? 2,
        successThreshold: o.successThreshold ?? 1,
        ...(o.evaluation ?? {}),
      },
      drain: {
        enabled: true,
        maxUnhealthyPercent: o.maxUnhealthyPercent ?? 50,
        ...(o.method ? { method: o.method } : {}),
        ...(o.drain ?? {}),
      },
      replacement: { enabled: false, ...(o.replacement ?? {}) },
    },
  };
}

/** Waits until the pod has an IP from the kubelet stand-in. */
export async function podIP(cluster: TestCluster, name: string): Promise<string> {
  return waitFor(async () => (await cluster.get("v1", "Pod", name))?.status?.podIP as string | undefined, {
    what: `pod ${name} to get an IP`,
  });
}

/** Endpoint readiness by pod name across the Service's slices written by the operator. */
export async function endpointReadiness(cluster: TestCluster, service: string): Promise<Map<string, boolean>> {
  return readinessOf(
    await cluster.list(
      "discovery.k8s.io/v1",
      "EndpointSlice",
      cluster.namespace,
      `kubernetes.io/service-name=${service}`,
    ),
  );
}
