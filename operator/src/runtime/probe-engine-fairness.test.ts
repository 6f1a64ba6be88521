import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { waitFor } from "../../../test/support/wait-for.js";
import { createProber } from "../adapters/prober.js";
import type { ProbeOutcome } from "../domain/probe-request.js";
import { ProbeScheduler, type ProbeTarget } from "./probe-scheduler.js";

// The scheduler and the real prober on loopback: pods of one namespace that accept connections
// and never answer hold their probes' slots for the whole timeout, and must not hold every slot.
let hang: NetServer;
let hangPort: number;
const hung = new Set<Socket>();
let hungEver = 0;
let web: HttpServer;
let webPort: number;

beforeAll(async () => {
  hang = createNetServer((socket) => {
    hung.add(socket);
    hungEver++;
    socket.on("close", () => hung.delete(socket));
    socket.on("error", () => hung.delete(socket));
  });
  web = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-length": 2 });
    res.end("ok");
  });
  await new Promise<void>((r) => hang.listen(0, "127.0.0.1", () => r()));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", () => r()));
  hangPort = (hang.address() as AddressInfo).port;
  webPort = (web.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const s of hung) s.destroy();
  web.closeAllConnections();
  await Promise.all([new Promise((r) => hang.close(r)), new Promise((r) => web.close(r))]);
});

function target(id: string, port: number): ProbeTarget {
  return {
    id,
    request: { scheme: "HTTP", address: "127.0.0.1", port, path: `/${id}`, method: "GET", headers: [] },
    // Far longer than the test: a hung probe never gives its slot back while it runs.
    judgement: { timeoutMs: 600_000, statusCodes: [[200, 299]] },
    periodMs: 50,
  };
}

describe("the probe engine across namespaces", () => {
  it("completes namespace t2's probes while namespace t1's hang in every slot it may take", async () => {
    const results: Array<{ owner: string; id: string; outcome: ProbeOutcome }> = [];
    const scheduler = new ProbeScheduler({
      execute: createProber(),
      maxConcurrent: 8,
      maxPerNamespace: 4,
      random: () => 0,
      onResult: (owner, id, outcome) => results.push({ owner, id, outcome }),
    });
    // Twenty hung pods in t1 would fill all eight slots without a per-namespace share.
    scheduler.setTargets(
      "t1/stuck",
      Array.from({ length: 20 }, (_, i) => target(`stuck-${i}`, hangPort)),
    );
    try {
      await waitFor(() => hung.size >= 4, { timeoutMs: 20_000, what: "t1's probes holding its four slots" });
      scheduler.setTargets(
        "t2/web",
        ["web-0", "web-1", "web-2"].map((id) => target(id, webPort)),
      );
      const done = (id: string) =>
        results.filter((r) => r.owner === "t2/web" && r.id === id && r.outcome.success).length;
      await waitFor(() => ["web-0", "web-1", "web-2"].every((id) => done(id) >= 3), {
        timeoutMs: 20_000,
        what: "three passing probes of each t2 pod",
      });
      expect(results.filter((r) => r.owner === "t1/stuck")).toEqual([]);
      expect(hungEver).toBe(4);
      expect(scheduler.stats()).toMatchObject({ queued: 16 });
    } finally {
      scheduler.stop();
    }
  });
});
