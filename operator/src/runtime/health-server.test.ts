import { describe, it, expect, afterAll } from "@jest/globals";
import { request } from "node:http";
import { startHealthServer, startMetricsServer, type RunningServer } from "./health-server.js";
import { createMetrics } from "./metrics.js";

const local = { disabled: false as const, host: "127.0.0.1", port: 0 };
const servers: RunningServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function get(port: number, path: string): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers["content-type"]) }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function started<T extends RunningServer | undefined>(p: Promise<T>): Promise<NonNullable<T>> {
  const s = await p;
  if (!s) throw new Error("server not started");
  servers.push(s);
  return s as NonNullable<T>;
}

describe("health server", () => {
  it("answers /healthz while alive and /readyz only once ready", async () => {
    let ready = false;
    const s = await started(startHealthServer({ address: local, isReady: () => ready }));
    expect(s.port).toBeGreaterThan(0);
    expect((await get(s.port, "/healthz")).status).toBe(200);
    const notReady = await get(s.port, "/readyz");
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain("not ready");
    ready = true;
    expect((await get(s.port, "/readyz")).status).toBe(200);
  });

  it("serves /debug/targets as JSON from the supplied function", async () => {
    const targets = [{ policy: "shop/web", pod: "web-1", state: "Healthy", latencyMs: 3 }];
    const s = await started(startHealthServer({ address: local, isReady: () => true, debugTargets: () => targets }));
    const res = await get(s.port, "/debug/targets");
    expect(res.status).toBe(200);
    expect(res.type).toContain("application/json");
    expect(JSON.parse(res.body)).toEqual(targets);
    expect((await get(s.port, "/nope")).status).toBe(404);
  });

  it("answers 500 when a supplied function throws, and keeps serving", async () => {
    const errors: unknown[] = [];
    const s = await started(
      startHealthServer({
        address: local,
        isReady: () => true,
        debugTargets: () => {
          throw new Error("boom");
        },
        onError: (e) => errors.push(e),
      }),
    );
    expect((await get(s.port, "/debug/targets")).status).toBe(500);
    expect(errors).toHaveLength(1);
    expect((await get(s.port, "/healthz")).status).toBe(200);
  });

  it("starts nothing when the address is disabled", async () => {
    expect(await startHealthServer({ address: { disabled: true }, isReady: () => true })).toBeUndefined();
    expect(await startMetricsServer({ address: { disabled: true }, registry: createMetrics({ processMetrics: false }).registry })).toBeUndefined();
  });
});

describe("metrics server", () => {
  it("serves the registry as Prometheus text at /metrics", async () => {
    const m = createMetrics({ processMetrics: false });
    m.leader.set(1);
    const s = await started(startMetricsServer({ address: local, registry: m.registry }));
    const res = await get(s.port, "/metrics");
    expect(res.status).toBe(200);
    expect(res.type).toContain("text/plain");
    expect(res.body).toContain("healthprobe_leader 1");
  });
});
