// Real HTTP servers standing in for pods, one per pod IP, whose answer the history flips:
// healthy (200), failing (503), refused (nothing listens), hanging (no response at all) and
// slow (the headers at once, the body never within any probe timeout). Every request is logged
// with the simulated time it arrived, so invariants can ask whether a pod was probed recently.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export type PodMode = "healthy" | "failing" | "refused" | "hanging" | "slow";
export const POD_MODES: readonly PodMode[] = ["healthy", "failing", "refused", "hanging", "slow"];

export interface ProbeHit {
  ip: string;
  /** Simulated epoch ms at arrival. */
  at: number;
  mode: PodMode;
}

interface PodServer {
  server: Server | undefined;
  mode: PodMode;
  sockets: Set<Socket>;
  /** Responses held open by hanging and slow modes. */
  held: Set<ServerResponse>;
}

/** How long a slow body takes to finish, in real ms: longer than any probe timeout the simulation uses. */
const SLOW_BODY_MS = 5_000;

export class PodServers {
  private readonly pods = new Map<string, PodServer>();
  readonly hits: ProbeHit[] = [];
  /** When each address's answer changed. */
  readonly modeChanges: Array<{ ip: string; at: number; mode: PodMode }> = [];

  constructor(
    private readonly now: () => number,
    private readonly port = 8080,
  ) {}

  has(ip: string): boolean {
    return this.pods.has(ip);
  }

  modeOf(ip: string): PodMode | undefined {
    return this.pods.get(ip)?.mode;
  }

  /** Starts serving `ip` (healthy unless told otherwise); a second call only changes the mode. */
  async serve(ip: string, mode: PodMode = "healthy"): Promise<void> {
    if (!this.pods.has(ip))
      this.pods.set(ip, { server: undefined, mode: "refused", sockets: new Set(), held: new Set() });
    await this.setMode(ip, mode);
  }

  async setMode(ip: string, mode: PodMode): Promise<void> {
    const pod = this.pods.get(ip);
    if (!pod) throw new Error(`no pod server for ${ip}`);
    if (pod.mode !== mode || !this.modeChanges.some((m) => m.ip === ip))
      this.modeChanges.push({ ip, at: this.now(), mode });
    pod.mode = mode;
    if (mode !== "hanging" && mode !== "slow") this.release(pod);
    if (mode === "refused") await this.closeServer(pod);
    else if (!pod.server) pod.server = await this.listen(ip, pod);
  }

  /** Requests still open (a probe in flight), hanging and slow ones included. */
  openRequests(): number {
    let n = 0;
    for (const p of this.pods.values()) n += p.sockets.size;
    return n;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pods.values()].map((p) => this.closeServer(p)));
    this.pods.clear();
  }

  private async listen(ip: string, pod: PodServer): Promise<Server> {
    const server = createServer((req, res) => {
      this.hits.push({ ip, at: this.now(), mode: pod.mode });
      this.answer(pod, res, req.method === "HEAD");
    });
    server.on("connection", (s: Socket) => {
      pod.sockets.add(s);
      s.on("close", () => pod.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, ip, () => resolve());
    });
    return server;
  }

  private answer(pod: PodServer, res: ServerResponse, head: boolean): void {
    const headers = { "content-type": "text/plain", connection: "close" };
    switch (pod.mode) {
      case "healthy":
        res.writeHead(200, headers).end(head ? undefined : "ok");
        return;
      case "failing":
      case "refused":
        res.writeHead(503, headers).end(head ? undefined : "unavailable");
        return;
      case "hanging":
        pod.held.add(res);
        res.on("close", () => pod.held.delete(res));
        return;
      case "slow": {
        res.writeHead(200, { ...headers, "content-length": "2" });
        res.write("o");
        pod.held.add(res);
        const timer = setTimeout(() => res.end("k"), SLOW_BODY_MS);
        res.on("close", () => {
          clearTimeout(timer);
          pod.held.delete(res);
        });
        return;
      }
    }
  }

  private release(pod: PodServer): void {
    for (const res of pod.held) res.destroy();
    pod.held.clear();
  }

  private async closeServer(pod: PodServer): Promise<void> {
    const server = pod.server;
    pod.server = undefined;
    this.release(pod);
    if (!server) return;
    for (const s of pod.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
