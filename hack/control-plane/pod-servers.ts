// The host's handle on the pod HTTP servers inside the pods' network namespace: starts
// pod-server-main.ts there with `ip netns exec` and sends it commands over its stdin.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export interface PodAnswer {
  status: number;
  body?: string;
  /** Answers after this many ms (a slow pod). */
  delayMs?: number;
}

interface Reply {
  id: number;
  ok: boolean;
  error?: string;
  hits?: number;
  seen?: boolean;
}

export class PodServers {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly stderr: () => string,
  ) {}

  /** Starts the server process in the network namespace; `marker` goes on its command line (for crash clean-up). */
  static async start(namespace: string, marker: string): Promise<PodServers> {
    const child = spawn(
      "ip",
      ["netns", "exec", namespace, process.execPath, "--import", "tsx", join(here, "pod-server-main.ts"), marker],
      {
        cwd: join(here, "..", ".."),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const servers = new PodServers(child, () => stderr);
    const ready = new Promise<void>((resolve, reject) => {
      servers.pending.set(0, { resolve: () => resolve(), reject });
    });
    createInterface({ input: child.stdout! }).on("line", (line) => servers.onLine(line));
    child.once("exit", (code, signal) => {
      servers.exited = true;
      const err = new Error(`the pod server process in ${namespace} exited (${signal ?? code}): ${stderr.trim()}`);
      for (const p of servers.pending.values()) p.reject(err);
      servers.pending.clear();
    });
    await ready;
    return servers;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private onLine(line: string): void {
    let reply: Reply;
    try {
      reply = JSON.parse(line);
    } catch {
      return;
    }
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (reply.ok) p.resolve(reply);
    else p.reject(new Error(`pod server: ${reply.error}`));
  }

  private send(cmd: Record<string, unknown>): Promise<Reply> {
    if (this.exited) return Promise.reject(new Error(`the pod server process is gone: ${this.stderr().trim()}`));
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, ...cmd })}\n`);
    });
  }

  async listen(ip: string, port: number): Promise<void> {
    await this.send({ op: "listen", ip, port });
  }

  /** What every path of the address answers, or one path when given. */
  async set(ip: string, answer: PodAnswer, path?: string): Promise<void> {
    await this.send({
      op: "set",
      ip,
      status: answer.status,
      body: answer.body,
      ...(answer.delayMs ? { delayMs: answer.delayMs } : {}),
      ...(path ? { path } : {}),
    });
  }

  async close(ip: string): Promise<void> {
    await this.send({ op: "close", ip });
  }

  async hits(ip: string): Promise<number> {
    return (await this.send({ op: "hits", ip })).hits ?? 0;
  }

  /** Whether any request to the address carried a header with this value. */
  async sawHeaderValue(ip: string, value: string): Promise<boolean> {
    return (await this.send({ op: "seen", ip, value })).seen ?? false;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await gone;
    clearTimeout(timer);
  }
}
