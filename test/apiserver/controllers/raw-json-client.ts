// Plain JSON requests over one keep-alive connection pool. client-node builds a new undici
// Agent, and so a new connection, for every request to a server it does not verify, and turns
// every body into its typed model and back; the kubelet stand-in writes one status per pod and
// the ReplicaSet controller creates one pod per replica, so at ten thousand pods that was most
// of their time. undici's request API rather than its fetch: fetch's streams and Request
// objects cost more per request than the rest of the write.
import { HttpMethod, RequestContext, type KubeConfig } from "@kubernetes/client-node";
import { Agent } from "undici";

export interface RawJsonClient {
  /** One request with a JSON body (if any); resolves to the answer's text, throws with `code` = the HTTP status when it is not 2xx. */
  request(method: "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<string>;
  close(): Promise<void>;
}

export function rawJsonClient(kc: KubeConfig, connections = 16): RawJsonClient {
  const server = kc.getCurrentCluster()?.server.replace(/\/$/, "");
  if (!server) throw new Error("raw JSON client: the kubeconfig has no current cluster");
  const { origin, pathname } = new URL(server);
  const base = pathname === "/" ? "" : pathname;
  const agent = new Agent({ connections, keepAliveTimeout: 10_000 });
  // Once: the test server's kubeconfigs carry a fixed token, and client-node builds an Agent each time it is asked.
  const auth = (async () => {
    const ctx = new RequestContext(server, HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    return ctx.getHeaders();
  })();
  return {
    async request(method, path, body) {
      const res = await agent.request({
        origin,
        path: base + path,
        method,
        headers: { ...(await auth), accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.body.text();
      if (res.statusCode < 200 || res.statusCode > 299) throw Object.assign(new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`), { code: res.statusCode, body: text });
      return text;
    },
    close: () => agent.close(),
  };
}
