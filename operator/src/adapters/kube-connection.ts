// Where the operator's requests go and how they authenticate, read the way client-node's
// KubeConfig reads it (a path, else in-cluster, else KUBECONFIG or ~/.kube/config), without
// loading client-node for the usual cases: a token or token file, client certificates, a CA,
// insecure-skip-tls-verify, tls-server-name, and the pod's service account. A kubeconfig that
// needs more (exec plugins, auth providers, proxies, basic auth, several merged files) is handed
// to client-node's KubeConfig, loaded only then.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isIPv6 } from "node:net";
import { dirname, isAbsolute, join } from "node:path";
import { Agent, type Dispatcher } from "undici";
import { parse as parseYaml } from "yaml";
import type { KubeConnection } from "./kube-client.js";

const SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
/** A token file is read again at most this often (client-go re-reads its service-account token every minute). */
const TOKEN_FILE_TTL_MS = 60_000;

export interface ConnectOptions {
  /** Path to a kubeconfig file; wins over everything else. */
  kubeconfig?: string;
  /** Kubeconfig content (YAML or JSON), e.g. from a test server. */
  kubeconfigYaml?: string;
  env?: Record<string, string | undefined>;
}

interface TlsOptions {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** A connection to the cluster the options name; throws naming the kubeconfig when it cannot be used. */
export async function connectKube(opts: ConnectOptions = {}): Promise<KubeConnection> {
  const env = opts.env ?? process.env;
  const where = opts.kubeconfig ? ` ${opts.kubeconfig}` : "";
  let simple: KubeConnection | "fallback";
  try {
    if (opts.kubeconfigYaml !== undefined)
      simple = fromKubeconfig(parseYaml(opts.kubeconfigYaml) as KubeconfigFile, process.cwd());
    else if (opts.kubeconfig)
      simple = fromKubeconfig(
        parseYaml(readFileSync(opts.kubeconfig, "utf8")) as KubeconfigFile,
        dirname(opts.kubeconfig),
      );
    else if (env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT, "token"))) simple = inCluster(env);
    else {
      const files = (env.KUBECONFIG ?? "").split(":").filter((f) => f !== "");
      const file = files.length === 0 ? join(homedir(), ".kube", "config") : files.length === 1 ? files[0]! : undefined;
      simple =
        file && existsSync(file)
          ? fromKubeconfig(parseYaml(readFileSync(file, "utf8")) as KubeconfigFile, dirname(file))
          : "fallback";
    }
  } catch (cause) {
    throw new Error(`loading kubeconfig${where}`, { cause });
  }
  return simple === "fallback" ? viaClientNode(opts) : simple;
}

interface KubeconfigFile {
  clusters?: Array<{ name: string; cluster: Record<string, unknown> }>;
  users?: Array<{ name: string; user?: Record<string, unknown> }>;
  contexts?: Array<{ name: string; context: { cluster: string; user?: string } }>;
  "current-context"?: string;
}

function fromKubeconfig(file: KubeconfigFile, baseDir: string): KubeConnection | "fallback" {
  const context = file.contexts?.find((c) => c.name === file["current-context"])?.context;
  const cluster = file.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  if (!cluster || typeof cluster.server !== "string")
    throw new Error("no current cluster (pass --kubeconfig or run in a cluster)");
  const user = file.users?.find((u) => u.name === context?.user)?.user ?? {};
  const needsClientNode =
    ["exec", "auth-provider", "username", "password", "as", "impersonate"].some((k) => user[k] !== undefined) ||
    cluster["proxy-url"] !== undefined;
  if (needsClientNode) return "fallback";
  const server = cluster.server.replace(/\/$/, "");
  const skipVerify = cluster["insecure-skip-tls-verify"] === true;
  if (server.startsWith("http:") && !skipVerify)
    throw new Error("HTTP protocol is not allowed when skipTLSVerify is not set or false");
  const path = (p: unknown) => (isAbsolute(String(p)) ? String(p) : join(baseDir, String(p)));
  const material = (data: unknown, file: unknown): Buffer | undefined =>
    typeof data === "string"
      ? Buffer.from(data, "base64")
      : typeof file === "string"
        ? readFileSync(path(file))
        : undefined;
  const tls: TlsOptions = {};
  const ca = material(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = material(user["client-certificate-data"], user["client-certificate"]);
  const key = material(user["client-key-data"], user["client-key"]);
  if (ca) tls.ca = ca;
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  if (skipVerify) tls.rejectUnauthorized = false;
  if (typeof cluster["tls-server-name"] === "string") tls.servername = cluster["tls-server-name"];
  const token = typeof user.token === "string" ? user.token : undefined;
  const tokenFile = typeof user.tokenFile === "string" ? path(user.tokenFile) : undefined;
  return connection(server, tls, bearer(token, tokenFile));
}

function inCluster(env: Record<string, string | undefined>): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const port = env.KUBERNETES_SERVICE_PORT ?? "443";
  // As client-node: these ports are plain HTTP.
  const scheme = port === "80" || port === "8080" || port === "8001" ? "http" : "https";
  const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  return connection(
    server,
    { ca: readFileSync(join(SERVICE_ACCOUNT, "ca.crt")) },
    bearer(undefined, join(SERVICE_ACCOUNT, "token")),
  );
}

/** Authorization headers from a token, or a token file read again at most once a minute (it rotates). */
function bearer(token: string | undefined, tokenFile: string | undefined): () => Promise<Record<string, string>> {
  if (token !== undefined) {
    const headers = { authorization: `Bearer ${token}` };
    return () => Promise.resolve(headers);
  }
  if (tokenFile === undefined) return () => Promise.resolve({});
  let cached: { at: number; headers: Record<string, string> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at >= TOKEN_FILE_TTL_MS)
      cached = { at: now, headers: { authorization: `Bearer ${readFileSync(tokenFile, "utf8").trim()}` } };
    return Promise.resolve(cached.headers);
  };
}

function connection(server: string, tls: TlsOptions, headers: () => Promise<Record<string, string>>): KubeConnection {
  // No cap on connections: each watch holds one for as long as it runs, and a write must never queue
  // behind them. An idle connection is given up after 1 s: a server that closes idle ones (Node's
  // default is 5 s) would otherwise race a request sent on one, failing it with a reset.
  const dispatcher: Dispatcher = new Agent({
    keepAliveTimeout: 1_000,
    keepAliveMaxTimeout: 1_000,
    connect: { ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 },
  });
  return { server, dispatcher, headers, close: () => dispatcher.close() };
}

/** Everything client-node's KubeConfig supports, at the cost of loading it. */
async function viaClientNode(opts: ConnectOptions): Promise<KubeConnection> {
  const { loadKubeConfig, connectionOf } = await import("./kube-config.js");
  return connectionOf(loadKubeConfig(opts));
}
