// A local HTTP target for probe benchmarks, in its own process so its CPU is not ours:
// nginx-light when installed (what the probe-cost figures were taken against), else a small
// node:http server. Loopback only.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "../support/wait-for.js";

export interface ProbeTarget {
  kind: "nginx-light" | "node";
  url: string;
  port: number;
  /** Requests served so far, when the target can tell (nginx stub_status). */
  requests(): Promise<number | undefined>;
  stop(): Promise<void>;
}

export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin", "/sbin"];
  return dirs.map((d) => join(d, name)).find((p) => p && existsSync(p));
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function reachable(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function startTarget(): Promise<ProbeTarget> {
  const port = await freePort();
  const nginx = findBinary("nginx");
  const dir = mkdtempSync(join(tmpdir(), "hp-bench-target-"));
  let child: ChildProcess;
  let kind: ProbeTarget["kind"];
  if (nginx) {
    kind = "nginx-light";
    const conf = join(dir, "nginx.conf");
    writeFileSync(
      conf,
      `daemon off;
master_process off;
worker_processes 1;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location = /nginx-status { stub_status; }
    location / { default_type text/plain; return 200 "ok\\n"; }
  }
}
`,
    );
    child = spawn(nginx, ["-c", conf, "-p", dir], { stdio: ["ignore", "ignore", "inherit"] });
  } else {
    kind = "node";
    const script = `require("node:http").createServer((q, s) => { s.writeHead(200, { "content-type": "text/plain", "content-length": 3 }); s.end("ok\\n"); }).listen(${port}, "127.0.0.1");`;
    child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "ignore", "inherit"] });
  }
  try {
    await waitFor(() => reachable(port), { timeoutMs: 10_000, what: `the ${kind} target on port ${port}` });
  } catch (err) {
    await stopChild(child);
    throw new Error(`starting the ${kind} probe target`, { cause: err });
  }
  return {
    kind,
    port,
    url: `http://127.0.0.1:${port}/healthz`,
    async requests() {
      if (kind !== "nginx-light") return undefined;
      const text = await (await fetch(`http://127.0.0.1:${port}/nginx-status`)).text();
      const m = /\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n/.exec(text);
      return m ? Number(m[3]) : undefined;
    },
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
