// Runs inside the pods' network namespace and serves HTTP for every pod address there, as the
// pods' containers would. Commands arrive on stdin, one JSON object a line, and each gets one JSON
// line back on stdout with the same id:
//   {"id":1,"op":"listen","ip":"10.244.7.130","port":8080}      start answering there (200 "ok")
//   {"id":2,"op":"set","ip":"10.244.7.130","status":503,"body":"x","path":"/healthz","delayMs":800}
//                                                                path and delayMs (a slow pod) optional
//   {"id":3,"op":"close","ip":"10.244.7.130"}                    stop every server of that address
//   {"id":4,"op":"hits","ip":"10.244.7.130"}                     requests seen: {"hits":N}
//   {"id":5,"op":"seen","ip":"10.244.7.130","value":"x"}         whether a request header had that value: {"seen":true}
// It exits when stdin closes.
import { createServer, type Server } from "node:http";
import { createInterface } from "node:readline";

interface Behaviour {
  status: number;
  body?: string;
  delayMs?: number;
}

const servers = new Map<string, Server[]>();
const behaviour = new Map<string, Behaviour>();
const pathBehaviour = new Map<string, Behaviour>();
const hits = new Map<string, number>();
/** Request header values per address, so a test can tell whether a value reached the pod. */
const headerValues = new Map<string, Set<string>>();

function answerFor(ip: string, path: string): Behaviour {
  return pathBehaviour.get(`${ip} ${path}`) ?? behaviour.get(ip) ?? { status: 200, body: "ok" };
}

async function listen(ip: string, port: number): Promise<void> {
  const server = createServer((req, res) => {
    hits.set(ip, (hits.get(ip) ?? 0) + 1);
    const seen = headerValues.get(ip) ?? new Set<string>();
    for (let i = 1; i < req.rawHeaders.length; i += 2) seen.add(req.rawHeaders[i]!);
    headerValues.set(ip, seen);
    const b = answerFor(ip, (req.url ?? "/").split("?")[0]!);
    const answer = () => {
      res.writeHead(b.status, { "content-type": "text/plain", connection: "close" });
      res.end(req.method === "HEAD" ? undefined : (b.body ?? ""));
    };
    if (b.delayMs) setTimeout(answer, b.delayMs);
    else answer();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, ip, () => resolve());
  });
  servers.set(ip, [...(servers.get(ip) ?? []), server]);
}

async function close(ip: string): Promise<void> {
  const list = servers.get(ip) ?? [];
  servers.delete(ip);
  behaviour.delete(ip);
  hits.delete(ip);
  headerValues.delete(ip);
  for (const key of [...pathBehaviour.keys()]) if (key.startsWith(`${ip} `)) pathBehaviour.delete(key);
  await Promise.all(
    list.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
}

async function handle(cmd: Record<string, any>): Promise<Record<string, unknown>> {
  const ip = String(cmd.ip ?? "");
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) throw new Error(`field ip: ${JSON.stringify(cmd.ip)} is not an IPv4 address`);
  switch (cmd.op) {
    case "listen":
      if (!Number.isInteger(cmd.port) || cmd.port < 1 || cmd.port > 65535)
        throw new Error(`field port: ${JSON.stringify(cmd.port)} is not a port`);
      await listen(ip, cmd.port);
      return {};
    case "set": {
      if (!Number.isInteger(cmd.status))
        throw new Error(`field status: ${JSON.stringify(cmd.status)} is not an HTTP status`);
      if (cmd.delayMs !== undefined && !(Number.isInteger(cmd.delayMs) && cmd.delayMs >= 0))
        throw new Error(`field delayMs: ${JSON.stringify(cmd.delayMs)} is not a whole number of milliseconds`);
      const b: Behaviour = {
        status: cmd.status,
        body: typeof cmd.body === "string" ? cmd.body : undefined,
        ...(cmd.delayMs ? { delayMs: cmd.delayMs as number } : {}),
      };
      if (typeof cmd.path === "string") pathBehaviour.set(`${ip} ${cmd.path}`, b);
      else behaviour.set(ip, b);
      return {};
    }
    case "close":
      await close(ip);
      return {};
    case "hits":
      return { hits: hits.get(ip) ?? 0 };
    case "seen":
      return { seen: headerValues.get(ip)?.has(String(cmd.value)) ?? false };
    default:
      throw new Error(`field op: unknown operation ${JSON.stringify(cmd.op)}`);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  let cmd: Record<string, any>;
  try {
    cmd = JSON.parse(line);
  } catch {
    process.stdout.write(`${JSON.stringify({ id: null, ok: false, error: `not JSON: ${line}` })}\n`);
    return;
  }
  handle(cmd).then(
    (result) => process.stdout.write(`${JSON.stringify({ id: cmd.id, ok: true, ...result })}\n`),
    (err: Error) => process.stdout.write(`${JSON.stringify({ id: cmd.id, ok: false, error: err.message })}\n`),
  );
});
lines.on("close", () => {
  Promise.all([...servers.keys()].map(close)).finally(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ id: 0, ok: true, ready: true })}\n`);
