// client-node's KubeConfig and typed API clients: what tests build fixtures with, and the
// connection for kubeconfigs the operator's own reader leaves to client-node (kube-connection.ts).
import { existsSync } from "node:fs";
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  EventsV1Api,
  HttpMethod,
  KubeConfig,
  PolicyV1Api,
  RequestContext,
} from "@kubernetes/client-node";
import { Agent, type Dispatcher } from "undici";
import { KubeClient, type KubeConnection } from "./kube-client.js";

const IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export interface LoadKubeConfigOptions {
  /** Path to a kubeconfig file; wins over everything else. */
  kubeconfig?: string;
  /** Kubeconfig content (YAML or JSON), e.g. from a test server. */
  kubeconfigYaml?: string;
  env?: Record<string, string | undefined>;
}

/**
 * A path wins; otherwise in-cluster config when running in a pod (service host set and a
 * service-account token mounted); otherwise KUBECONFIG or ~/.kube/config.
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const env = opts.env ?? process.env;
  try {
    if (opts.kubeconfigYaml !== undefined) kc.loadFromString(opts.kubeconfigYaml);
    else if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
    else if (env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN)) kc.loadFromCluster();
    else kc.loadFromDefault();
  } catch (cause) {
    throw new Error(`loading kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ""}`, { cause });
  }
  if (!kc.getCurrentCluster())
    throw new Error("loading kubeconfig: no current cluster (pass --kubeconfig or run in a cluster)");
  return kc;
}

export interface KubeApis {
  core: CoreV1Api;
  discovery: DiscoveryV1Api;
  coordination: CoordinationV1Api;
  events: EventsV1Api;
  policy: PolicyV1Api;
  customObjects: CustomObjectsApi;
}

export function makeApis(kc: KubeConfig): KubeApis {
  return {
    core: kc.makeApiClient(CoreV1Api),
    discovery: kc.makeApiClient(DiscoveryV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    events: kc.makeApiClient(EventsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
    customObjects: kc.makeApiClient(CustomObjectsApi),
  };
}

/** How often the pool of a connection through a KubeConfig is rebuilt from its TLS settings (client certificates may rotate). */
const POOL_RENEW_MS = 5 * 60_000;

/**
 * A keep-alive connection that authenticates through a KubeConfig: its authentication runs per
 * request (exec plugins and auth providers refresh their tokens there), and requests share one
 * pool built from its TLS settings, rebuilt every few minutes, instead of a new one per request.
 */
export function connectionOf(kc: KubeConfig): KubeConnection {
  const server = kc.getCurrentCluster()?.server.replace(/\/$/, "");
  if (!server) throw new Error("loading kubeconfig: no current cluster (pass --kubeconfig or run in a cluster)");
  let pool: { dispatcher: Dispatcher; at: number } | undefined;
  return {
    server,
    get dispatcher(): Dispatcher {
      if (!pool) pool = { dispatcher: new Agent(), at: Date.now() };
      return pool.dispatcher;
    },
    async headers() {
      const ctx = new RequestContext(server, HttpMethod.GET);
      await kc.applySecurityAuthentication(ctx);
      const fresh = ctx.getDispatcher() as Dispatcher | undefined;
      if (fresh && (!pool || Date.now() - pool.at >= POOL_RENEW_MS)) {
        const old = pool?.dispatcher;
        pool = { dispatcher: fresh, at: Date.now() };
        void old?.close();
      } else void fresh?.close();
      return ctx.getHeaders();
    },
    close: async () => {
      await pool?.dispatcher.close();
    },
  };
}

/** The operator's JSON client over a KubeConfig (tests and the test server's controllers build theirs so). */
export function kubeClientOf(kc: KubeConfig): KubeClient {
  return new KubeClient(connectionOf(kc));
}
