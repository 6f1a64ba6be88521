// Liveness, readiness and debug endpoints on one listener, Prometheus text on another.
// /healthz and /readyz are open (kubelet probes them without a token); /metrics and
// /debug/targets go through the guard (TokenReview and SubjectAccessReview, see endpoint-guard.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { accessOf } from "../domain/endpoint-access.js";
import type { BindAddress } from "./config.js";
import { parseDebugQuery, writeDebugPage, type DebugSnapshot } from "./debug-targets.js";
import type { EndpointGuard } from "./endpoint-guard.js";

export interface RunningServer {
  /** The port actually bound (useful with port 0). */
  port: number;
  host: string;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  address: BindAddress;
  /** True once the caches have synced and the operator can act. */
  isReady: () => boolean;
  /** Live per-target figures served as JSON at /debug/targets, paged (see debug-targets.ts). */
  debugTargets?: () => DebugSnapshot;
  /** Who may read /debug/targets; without one it answers 403 to everyone (never open by omission). */
  guard?: EndpointGuard;
  /** Longest event-loop stall /healthz tolerates before reporting unhealthy. */
  maxEventLoopStallMs?: number;
  onError?: (err: unknown) => void;
}

export interface MetricsServerOptions {
  address: BindAddress;
  registry: Registry;
  /** Who may read /metrics (OPEN_GUARD with --insecure-diagnostics). */
  guard: EndpointGuard;
  onError?: (err: unknown) => void;
}

function send(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
  res.end(body);
}

/** Listens on the address; for node:http and node:https servers alike. */
export async function listen(
  server: Server | HttpsServer,
  address: Exclude<BindAddress, { disabled: true }>,
): Promise<RunningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // An empty host means all interfaces, as ":8080" does in Go.
    server.listen(address.port, address.host || undefined, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const info = server.address() as AddressInfo;
  return {
    port: info.port,
    host: info.address,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Returns undefined when the address is "0" (disabled). */
export async function startHealthServer(opts: HealthServerOptions): Promise<RunningServer | undefined> {
  if (opts.address.disabled) return undefined;
  const maxStall = opts.maxEventLoopStallMs ?? 10_000;
  // A heartbeat timer that stops ticking means the event loop is starved, even if this request got through.
  const heartbeatMs = Math.min(1000, Math.max(10, Math.floor(maxStall / 4)));
  let lastBeat = Date.now();
  const heartbeat = setInterval(() => (lastBeat = Date.now()), heartbeatMs);
  heartbeat.unref();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    try {
      const path = (req.url ?? "/").split("?")[0];
      if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "method not allowed\n");
      switch (path) {
        case "/healthz": {
          const stall = Date.now() - lastBeat;
          return stall > maxStall ? send(res, 503, `event loop stalled for ${stall} ms\n`) : send(res, 200, "ok\n");
        }
        case "/readyz":
          return opts.isReady() ? send(res, 200, "ok\n") : send(res, 503, "not ready: caches not synced\n");
        case "/debug/targets":
          if (!opts.debugTargets) return send(res, 404, "not found\n");
          return void serveDebugTargets(req, res, opts);
        default:
          return send(res, 404, "not found\n");
      }
    } catch (err) {
      opts.onError?.(err);
      send(res, 500, "internal error\n");
    }
  });
  const running = await listen(server, opts.address);
  return {
    ...running,
    close: async () => {
      clearInterval(heartbeat);
      await running.close();
    },
  };
}

/** Answers a locked path's request with the guard's verdict unless it lets the request through. */
async function admitted(
  guard: EndpointGuard | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  if (accessOf(path) === "open") return true;
  if (!guard) {
    send(res, 403, "no access check configured\n");
    return false;
  }
  const verdict = await guard.check(req, path);
  if (verdict.status === 200) return true;
  send(res, verdict.status, `${verdict.message}\n`);
  return false;
}

async function serveDebugTargets(req: IncomingMessage, res: ServerResponse, opts: HealthServerOptions): Promise<void> {
  try {
    if (!(await admitted(opts.guard, req, res, "/debug/targets"))) return;
    const q = parseDebugQuery(new URL(req.url ?? "/", "http://localhost").searchParams);
    if (typeof q === "string") return send(res, 400, `${q}\n`);
    await writeDebugPage(res, opts.debugTargets!(), q);
  } catch (err) {
    opts.onError?.(err);
    if (!res.headersSent) send(res, 500, "internal error\n");
    else res.destroy();
  }
}

/** Returns undefined when the address is "0" (disabled). */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<RunningServer | undefined> {
  if (opts.address.disabled) return undefined;
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") return send(res, 404, "not found\n");
    (async () => {
      if (!(await admitted(opts.guard, req, res, path))) return;
      send(res, 200, await opts.registry.metrics(), opts.registry.contentType);
    })().catch((err: unknown) => {
      opts.onError?.(err);
      if (!res.headersSent) send(res, 500, "collecting metrics failed\n");
    });
  });
  return listen(server, opts.address);
}
