// Real HTTP servers standing in for pods: one per loopback IP the kubelet stand-in hands out,
// each answering its health path with what the test sets.
import { createServer, type Server } from "node:http";

export interface PodBehaviour {
  status: number;
  body?: string;
  /** Answers after this many ms (a slow pod), instead of at once. */
  delayMs?: number;
}

/**
 * What a test does with its pods' servers, on either cluster: here on loopback (PodFarm), or on
 * the real control plane inside the pods' network namespace (NetnsFarm). Answers are set without
 * waiting; a later await (hits, a stop, close) sees them applied first.
 */
export interface Farm {
  /** Serves the address (where the kubelet does not already serve each container port). */
  serve(ip: string, port?: number): Promise<void>;
  /** Stops the address's server, as a pod's process ends with the pod; a later `serve` starts a new one. */
  stop(ip: string, port?: number): Promise<void>;
  set(ip: string, behaviour: PodBehaviour): void;
  setPath(ip: string, path: string, behaviour: PodBehaviour): void;
  healthy(ip: string): void;
  failing(ip: string): void;
  /** Requests the address has seen. */
  hitsOf(ip: string): Promise<number>;
  /** Whether a request to the address carried a header with this value. */
  sawHeaderValue(ip: string, value: string): Promise<boolean>;
  close(): Promise<void>;
}

export class PodFarm implements Farm {
  private readonly servers = new Map<string, Server>();
  private readonly behaviour = new Map<string, PodBehaviour>();
  /** Per-path answers by `${ip} ${path}`, ahead of the address-wide one. */
  private readonly pathBehaviour = new Map<string, PodBehaviour>();
  /** Requests seen per address, for assertions on probing. */
  readonly hits = new Map<string, number>();
  /** Every request header value seen per address, to tell whether a value reached a pod. */
  readonly headerValues = new Map<string, Set<string>>();

  async serve(ip: string, port = 8080): Promise<void> {
    const key = `${ip}:${port}`;
    if (this.servers.has(key)) return;
    const server = createServer((req, res) => {
      this.hits.set(ip, (this.hits.get(ip) ?? 0) + 1);
      const seen = this.headerValues.get(ip) ?? new Set<string>();
      for (let i = 1; i < req.rawHeaders.length; i += 2) seen.add(req.rawHeaders[i]!);
      this.headerValues.set(ip, seen);
      const path = (req.url ?? "/").split("?")[0];
      const b = this.pathBehaviour.get(`${ip} ${path}`) ?? this.behaviour.get(ip) ?? { status: 200, body: "ok" };
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
    this.servers.set(key, server);
  }

  /** Stops the server on one address, as a pod's process ends with the pod; a later `serve` starts a new one. */
  async stop(ip: string, port = 8080): Promise<void> {
    const key = `${ip}:${port}`;
    const server = this.servers.get(key);
    if (!server) return;
    this.servers.delete(key);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  set(ip: string, behaviour: PodBehaviour): void {
    this.behaviour.set(ip, behaviour);
  }

  /** What one path of the address answers, whatever `set` says for the rest. */
  setPath(ip: string, path: string, behaviour: PodBehaviour): void {
    this.pathBehaviour.set(`${ip} ${path}`, behaviour);
  }

  async hitsOf(ip: string): Promise<number> {
    return this.hits.get(ip) ?? 0;
  }

  async sawHeaderValue(ip: string, value: string): Promise<boolean> {
    return this.headerValues.get(ip)?.has(value) ?? false;
  }

  healthy(ip: string): void {
    this.set(ip, { status: 200, body: "ok" });
  }

  failing(ip: string): void {
    this.set(ip, { status: 503, body: "unavailable" });
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
    this.servers.clear();
  }
}
