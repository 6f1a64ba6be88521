import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startProbeTypeTargets, type ProbeTypeTargets } from "../../../test/support/probe-type-targets.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { createProber } from "../adapters/prober.js";
import type { ProbeOutcome, ProbeRequest } from "../domain/probe-request.js";
import { ProbeScheduler, type ProbeTarget } from "./probe-scheduler.js";

// The scheduler and the real prober together, on the real clock, for TCP and gRPC targets.
let servers: ProbeTypeTargets;

beforeAll(async () => {
  servers = await startProbeTypeTargets();
});

afterAll(() => servers.close());

const base: ProbeRequest = { scheme: "HTTP", address: "127.0.0.1", port: 0, path: "", method: "GET", headers: [] };
function target(id: string, request: Partial<ProbeRequest>): ProbeTarget {
  return { id, request: { ...base, ...request }, judgement: { timeoutMs: 300, statusCodes: [] }, periodMs: 150 };
}

describe("the probe engine with TCP and gRPC targets", () => {
  it("judges each kind of server, and sends a probe shared by two policies once", async () => {
    const { accepting, silent, refused, grpc } = servers;
    const results: Array<{ owner: string; id: string; outcome: ProbeOutcome }> = [];
    const scheduler = new ProbeScheduler({
      execute: createProber(),
      onResult: (owner, id, outcome) => results.push({ owner, id, outcome }),
    });
    scheduler.setTargets("ns/a", [
      target("tcp-accepting", { type: "TCP", port: accepting.port }),
      target("tcp-refused", { type: "TCP", port: refused }),
      target("tcp-silent", { type: "TCP", port: silent.port }),
      target("grpc-serving", { type: "GRPC", port: grpc.port, grpcService: "" }),
      target("grpc-down", { type: "GRPC", port: grpc.port, grpcService: "shop.Down" }),
      target("grpc-gone", { type: "GRPC", port: grpc.port, grpcService: "shop.Gone" }),
      target("grpc-hang", { type: "GRPC", port: grpc.port, grpcService: "shop.Hang" }),
    ]);
    // Another policy with two of the same gRPC probes: each is sent once, for both.
    scheduler.setTargets("ns/b", [
      target("grpc-serving", { type: "GRPC", port: grpc.port, grpcService: "" }),
      target("grpc-down", { type: "GRPC", port: grpc.port, grpcService: "shop.Down" }),
    ]);
    const of = (owner: string, id: string) =>
      results.filter((r) => r.owner === owner && r.id === id).map((r) => r.outcome);
    const ids = ["tcp-accepting", "tcp-refused", "tcp-silent", "grpc-serving", "grpc-down", "grpc-gone", "grpc-hang"];
    try {
      await waitFor(() => ids.every((id) => of("ns/a", id).length >= 2), {
        timeoutMs: 15_000,
        what: "two probes of each target",
      });
    } finally {
      scheduler.stop();
    }
    await waitFor(() => scheduler.stats().inFlight === 0, { timeoutMs: 5_000, what: "in-flight probes to finish" });
    const classes = (id: string) => [
      ...new Set(of("ns/a", id).map((o) => `${o.success ? "ok" : o.failureKind}: ${o.failureClass}`)),
    ];
    expect(Object.fromEntries(ids.map((id) => [id, classes(id)]))).toEqual({
      "tcp-accepting": ["ok: TCP connected"],
      "tcp-refused": ["connect: connect ECONNREFUSED"],
      "tcp-silent": ["timeout: timeout after 300ms"],
      "grpc-serving": ["ok: gRPC SERVING"],
      "grpc-down": ["grpc_status: gRPC NOT_SERVING"],
      "grpc-gone": ["grpc_status: gRPC SERVICE_UNKNOWN"],
      "grpc-hang": ["timeout: timeout after 300ms"],
    });
    // One call per probe of the shared target, delivered to both policies.
    const overall = grpc.calls.filter((c) => c.service === "").length;
    expect(of("ns/b", "grpc-serving").length).toBe(of("ns/a", "grpc-serving").length);
    expect(overall - of("ns/a", "grpc-serving").length).toBeGreaterThanOrEqual(0);
    expect(overall - of("ns/a", "grpc-serving").length).toBeLessThanOrEqual(1);
  });
});
