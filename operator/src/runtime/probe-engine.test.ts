import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "../../../test/support/wait-for.js";
import { createHttpProber } from "../adapters/http-prober.js";
import type { ProbeOutcome } from "../domain/probe-request.js";
import { ProbeScheduler, type ProbeTarget } from "./probe-scheduler.js";

// The scheduler and the real prober together, on the real clock, against a local server.
let server: Server;
let port: number;
const active = new Map<string, number>();
const served = new Map<string, number>();
let overlaps = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "";
    if ((active.get(path) ?? 0) > 0) overlaps++;
    active.set(path, (active.get(path) ?? 0) + 1);
    served.set(path, (served.get(path) ?? 0) + 1);
    // /slow answers after more than a period: the next probe must wait for it.
    const delay = path.startsWith("/slow") ? 250 : 0;
    setTimeout(() => {
      active.set(path, (active.get(path) ?? 1) - 1);
      res.writeHead(path.startsWith("/down") ? 503 : 200, { "content-length": 2 });
      res.end("ok");
    }, delay);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});

afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

function target(path: string, periodMs = 100): ProbeTarget {
  return {
    id: `uid${path}`,
    request: { scheme: "HTTP", address: "127.0.0.1", port, path, method: "GET", headers: [] },
    judgement: { timeoutMs: 1000, statusCodes: [[200, 299]] },
    periodMs,
  };
}

describe("the probe engine", () => {
  it("probes every target repeatedly, one probe at a time each, and stops when told", async () => {
    const results: Array<{ owner: string; id: string; outcome: ProbeOutcome }> = [];
    const scheduler = new ProbeScheduler({
      execute: createHttpProber(),
      onResult: (owner, id, outcome) => results.push({ owner, id, outcome }),
    });
    scheduler.setTargets("ns/web", [target("/up-1"), target("/up-2"), target("/down-1"), target("/slow-1")]);
    scheduler.setTargets("ns/other", [target("/up-1")]);
    // Counted as delivered, not as served: a probe the server has seen may still be in flight
    // when stop() comes, and then it delivers nothing.
    const delivered = (path: string) => results.filter((r) => r.owner === "ns/web" && r.id === `uid${path}`).length;
    try {
      await waitFor(() => ["/up-1", "/up-2", "/down-1"].every((p) => delivered(p) >= 3) && delivered("/slow-1") >= 2, {
        timeoutMs: 10_000,
        what: "three probes of each target",
      });
    } finally {
      scheduler.stop();
    }
    await waitFor(() => scheduler.stats().inFlight === 0, { timeoutMs: 5_000, what: "in-flight probes to finish" });
    const after = new Map(served);
    expect(overlaps).toBe(0);
    const of = (owner: string, id: string) =>
      results.filter((r) => r.owner === owner && r.id === id).map((r) => r.outcome);
    expect(of("ns/web", "uid/down-1").every((o) => o.failureClass === "HTTP 503")).toBe(true);
    expect(of("ns/web", "uid/up-2").every((o) => o.success)).toBe(true);
    // Shared by two owners: one request each time, delivered to both.
    expect(of("ns/web", "uid/up-1").length).toBeGreaterThanOrEqual(3);
    expect(of("ns/other", "uid/up-1").length).toBe(of("ns/web", "uid/up-1").length);
    // (A probe in flight at stop() reaches the server but delivers nothing.)
    const sent = served.get("/up-1") ?? 0;
    expect(sent - of("ns/web", "uid/up-1").length).toBeGreaterThanOrEqual(0);
    expect(sent - of("ns/web", "uid/up-1").length).toBeLessThanOrEqual(1);
    // Nothing is sent after stop() once in-flight probes are done.
    await new Promise<void>((r) => setImmediate(r));
    expect(served).toEqual(after);
  });
});
