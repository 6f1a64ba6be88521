// Plain JSON requests over one keep-alive connection pool. client-node builds a new undici
// Agent, and so a new connection, for every request to a server it does not verify, and turns
// every body into its typed model and back; the kubelet stand-in writes one status per pod and
// the ReplicaSet controller creates one pod per replica, so at ten thousand pods that was most
// of their time. undici's request API rather than its fetch: fetch's streams and Request
// objects cost more per request than the rest of the write.
//
// Given the server's own request handler (the controllers run inside the test server), the same
// requests go to it in process: the handler cannot tell them from requests over a socket (the
// same method, path, headers and body), and it answers them as it answers those.
import { HttpMethod, RequestContext, type KubeConfig } from "@kubernetes/client-node";
import { Agent } from "undici";
import { loopbackRequest, type RequestHandler } from "../loopback.js";

export interface RawJsonClient {
  /** One request with a JSON body (if any); resolves to the answer's text, throws with `code` = the HTTP status when it is not 2xx. */
  request(method: "POST" | "PUT" | "DELETE", path: string, body?: unknown): Promise<string>;
  close(): Promise<void>;
}

export function rawJsonClient(
  kc: KubeConfig,
  opts: { connections?: number; handler?: RequestHandler } = {},
): RawJsonClient {
  const server = kc.getCurrentCluster()?.server.replace(/\/$/, "");
  if (!server) throw new Error("raw JSON client: the kubeconfig has no current cluster");
  const { origin, host, pathname } = new URL(server);
  const base = pathname === "/" ? "" : pathname;
  const agent = opts.handler ? undefined : new Agent({ connections: opts.connections ?? 16, keepAliveTimeout: 10_000 });
  // Once: the test server's kubeconfigs carry a fixed token, and client-node builds an Agent each time it is asked.
  const auth = (async () => {
    const ctx = new RequestContext(server, HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    return ctx.getHeaders();
  })();
  const send = async (
    method: string,
    path: string,
    body: string | undefined,
  ): Promise<{ statusCode: number; text: string }> => {
    const headers = {
      ...(await auth),
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    };
    if (agent) {
      const res = await agent.request({
        origin,
        path: base + path,
        method: method as "PUT",
        headers,
        ...(body === undefined ? {} : { body }),
      });
      return { statusCode: res.statusCode, text: await res.body.text() };
    }
    // The headers as node's server presents them: lower-case names, with the ones undici adds.
    const lower: Record<string, string> = { host };
    for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
    if (body !== undefined) lower["content-length"] = String(Buffer.byteLength(body));
    return loopbackRequest(opts.handler!, method, base + path, lower, body);
  };
  return {
    async request(method, path, body) {
      const { statusCode, text } = await send(method, path, body === undefined ? undefined : JSON.stringify(body));
      if (statusCode < 200 || statusCode > 299)
        throw Object.assign(new Error(`${method} ${path}: HTTP ${statusCode}: ${text.slice(0, 200)}`), {
          code: statusCode,
          body: text,
        });
      return text;
    },
    close: async () => agent?.close(),
  };
}
