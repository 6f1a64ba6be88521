// The fault proxy's control API, under /fault-proxy/ on the proxy's own port (no Kubernetes path
// starts so), for a driver in another process:
//   POST   /fault-proxy/rules            a FaultRule as JSON → {"id": n}
//   DELETE /fault-proxy/rules/<id>       remove one rule;  DELETE /fault-proxy/rules: all (clear)
//   GET    /fault-proxy/rules            the rules in force
//   POST   /fault-proxy/drop-watches | stall-watches | expire-next-watch | partition | cut-connections
//   GET    /fault-proxy/log?since=<seq>  the request log after that sequence number
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FaultProxy } from "./fault-proxy.js";
import type { FaultRule } from "./rules.js";

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : {};
}

function reply(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

// The control request's own connection survives a partition or a cut, so it gets its answer.
const ACTIONS: Record<string, (p: FaultProxy, own: Socket) => unknown> = {
  "drop-watches": (p) => p.dropWatches(),
  "stall-watches": (p) => p.stallWatches(),
  "expire-next-watch": (p) => p.expireNextWatch(),
  partition: (p, own) => ({ id: p.partition(own) }),
  "cut-connections": (p, own) => p.cutConnections(own),
};

export async function handleControl(proxy: FaultProxy, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const u = new URL(req.url ?? "/", "http://proxy.invalid");
  const [, , what = "", id] = u.pathname.split("/");
  try {
    if (what === "rules" && req.method === "POST")
      return reply(res, 201, { id: proxy.addRule((await readJson(req)) as FaultRule) });
    if (what === "rules" && req.method === "GET") return reply(res, 200, proxy.rules.list());
    if (what === "rules" && req.method === "DELETE") {
      if (id) proxy.removeRule(Number(id));
      else proxy.clear();
      return reply(res, 200, {});
    }
    if (what === "log" && req.method === "GET") {
      const since = Number(u.searchParams.get("since") ?? "0");
      return reply(
        res,
        200,
        proxy.log.filter((e) => e.seq > since),
      );
    }
    const action = ACTIONS[what];
    if (action && req.method === "POST") return reply(res, 200, action(proxy, req.socket) ?? {});
    reply(res, 404, { error: `unknown fault-proxy control request ${req.method} ${u.pathname}` });
  } catch (err) {
    reply(res, 400, { error: (err as Error).message });
  }
}
