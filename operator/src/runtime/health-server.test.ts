import { describe, it, expect, afterAll } from "@jest/globals";
import { request } from "node:http";
import { OPEN_GUARD, type EndpointGuard } from "./endpoint-guard.js";
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
    const targets = [{ policy: "shop/web", uid: "u1", pod: "web-1", state: "Healthy", latencyMs: 3 }];
    const s = await started(
      startHealthServer({
        address: local,
        isReady: () => true,
        debugTargets: () => ({ targets, scheduler: { inFlight: 0 } }),
        guard: OPEN_GUARD,
      }),
    );
    const res = await get(s.port, "/debug/targets");
    expect(res.status).toBe(200);
    expect(res.type).toContain("application/json");
    expect(JSON.parse(res.body)).toEqual({ scheduler: { inFlight: 0 }, limit: 1000, truncated: false, targets });
    expect((await get(s.port, "/nope")).status).toBe(404);
  });

  it("pages /debug/targets by namespace, limit and continue, in policy and uid order", async () => {
    const target = (policy: string, uid: string) => ({ policy, uid, pod: `pod-${uid}` });
    const targets = [
      target("t2/web", "b"),
      target("t1/web", "c"),
      target("t1/api", "z"),
      target("t1/web", "a"),
      target("t10/web", "x"),
    ];
    const s = await started(
      startHealthServer({ address: local, isReady: () => true, debugTargets: () => ({ targets }), guard: OPEN_GUARD }),
    );
    const first = JSON.parse((await get(s.port, "/debug/targets?namespace=t1&limit=2")).body);
    expect(first).toMatchObject({ limit: 2, truncated: true, targets: [target("t1/api", "z"), target("t1/web", "a")] });
    const rest = JSON.parse((await get(s.port, `/debug/targets?namespace=t1&limit=2&continue=${first.continue}`)).body);
    expect(rest).toEqual({ limit: 2, truncated: false, targets: [target("t1/web", "c")] });
  });

  it("writes a large page whole, in chunks", async () => {
    const targets = Array.from({ length: 2500 }, (_, i) => ({
      policy: "shop/web",
      uid: `u${String(i).padStart(5, "0")}`,
      pod: `web-${i}`,
    }));
    const s = await started(
      startHealthServer({ address: local, isReady: () => true, debugTargets: () => ({ targets }), guard: OPEN_GUARD }),
    );
    const page = JSON.parse((await get(s.port, "/debug/targets?limit=10000")).body);
    expect(page.targets).toEqual(targets);
    expect(page.truncated).toBe(false);
    const capped = JSON.parse((await get(s.port, "/debug/targets")).body);
    expect(capped.targets).toHaveLength(1000);
    expect(capped.truncated).toBe(true);
  });

  const badQueries: Array<[string, string, RegExp]> = [
    ["a limit of 0", "limit=0", /^limit must be an integer from 1 to 10000, got "0"/],
    ["a limit above the maximum", "limit=10001", /^limit must be/],
    ["a limit that is not a number", "limit=many", /^limit must be/],
    ["a continue marker it never returned", "continue=bm9wZQ", /^continue is not a marker/],
  ];
  for (const [name, query, message] of badQueries) {
    it(`answers 400 naming the parameter for ${name}`, async () => {
      const s = await started(
        startHealthServer({
          address: local,
          isReady: () => true,
          debugTargets: () => ({ targets: [] }),
          guard: OPEN_GUARD,
        }),
      );
      const res = await get(s.port, `/debug/targets?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatch(message);
    });
  }

  it("answers /debug/targets with the guard's verdict, and keeps /healthz and /readyz open", async () => {
    const denying: EndpointGuard = { check: async () => ({ status: 401, message: "Unauthorized" }) };
    const s = await started(
      startHealthServer({ address: local, isReady: () => true, debugTargets: () => ({ targets: [] }), guard: denying }),
    );
    expect(await get(s.port, "/debug/targets")).toMatchObject({ status: 401, body: "Unauthorized\n" });
    expect((await get(s.port, "/healthz")).status).toBe(200);
    expect((await get(s.port, "/readyz")).status).toBe(200);
  });

  it("answers /debug/targets 403 without a guard: never open by omission", async () => {
    const s = await started(
      startHealthServer({ address: local, isReady: () => true, debugTargets: () => ({ targets: [] }) }),
    );
    expect((await get(s.port, "/debug/targets")).status).toBe(403);
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
        guard: OPEN_GUARD,
        onError: (e) => errors.push(e),
      }),
    );
    expect((await get(s.port, "/debug/targets")).status).toBe(500);
    expect(errors).toHaveLength(1);
    expect((await get(s.port, "/healthz")).status).toBe(200);
  });

  it("starts nothing when the address is disabled", async () => {
    expect(await startHealthServer({ address: { disabled: true }, isReady: () => true })).toBeUndefined();
    expect(
      await startMetricsServer({
        address: { disabled: true },
        registry: createMetrics({ processMetrics: false }).registry,
        guard: OPEN_GUARD,
      }),
    ).toBeUndefined();
  });
});

describe("metrics server", () => {
  it("serves the registry as Prometheus text at /metrics", async () => {
    const m = createMetrics({ processMetrics: false });
    m.leader.set(1);
    const s = await started(startMetricsServer({ address: local, registry: m.registry, guard: OPEN_GUARD }));
    const res = await get(s.port, "/metrics");
    expect(res.status).toBe(200);
    expect(res.type).toContain("text/plain");
    expect(res.body).toContain("healthprobe_leader 1");
  });

  it("answers /metrics with the guard's verdict when it does not let the request through", async () => {
    const forbidding: EndpointGuard = {
      check: async () => ({ status: 403, message: "Authorization denied for user alice" }),
    };
    const s = await started(
      startMetricsServer({
        address: local,
        registry: createMetrics({ processMetrics: false }).registry,
        guard: forbidding,
      }),
    );
    expect(await get(s.port, "/metrics")).toMatchObject({ status: 403, body: "Authorization denied for user alice\n" });
  });
});
