// Plain JSON requests over one keep-alive connection pool. client-node builds a new undici
// Agent, and so a new connection, for every request to a server it does not verify, and turns
// every body into its typed model and back; the kubelet stand-in writes one status per pod, so
// at ten thousand pods that was most of its time.
import { HttpMethod, RequestContext, type KubeConfig } from "@kubernetes/client-node";
import { Agent, fetch } from "undici";

export interface RawJsonClient {
  /** PUT a JSON body; throws with `code` = the HTTP status when it is not 2xx. */
  put(path: string, body: unknown): Promise<void>;
  close(): Promise<void>;
}

export function rawJsonClient(kc: KubeConfig, connections = 16): RawJsonClient {
  const server = kc.getCurrentCluster()?.server.replace(/\/$/, "");
  if (!server) throw new Error("raw JSON client: the kubeconfig has no current cluster");
  const agent = new Agent({ connections, keepAliveTimeout: 10_000 });
  return {
    async put(path, body) {
      const url = server + path;
      const ctx = new RequestContext(url, HttpMethod.PUT);
      await kc.applySecurityAuthentication(ctx);
      const res = await fetch(url, {
        method: "PUT",
        headers: { ...ctx.getHeaders(), "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        dispatcher: agent,
      });
      const text = await res.text();
      if (res.status < 200 || res.status > 299) throw Object.assign(new Error(`PUT ${path}: HTTP ${res.status}: ${text.slice(0, 200)}`), { code: res.status, body: text });
    },
    close: () => agent.close(),
  };
}
