import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startProbeTypeTargets, type ProbeTypeTargets } from "../../test/support/probe-type-targets.js";
import { runProbeCommand } from "./probe-command.js";

// `npm run probe` for every probe type, against real servers, and the latency threshold.
let servers: ProbeTypeTargets;
let slowHttp: Server;

beforeAll(async () => {
  servers = await startProbeTypeTargets();
  // A pod that answers 200, in 800 ms.
  slowHttp = createServer((_req, res) => setTimeout(() => res.end("ok"), 800));
  await new Promise<void>((r) => slowHttp.listen(0, "127.0.0.1", () => r()));
});

afterAll(async () => {
  await servers.close();
  slowHttp.closeAllConnections();
  await new Promise<void>((r) => slowHttp.close(() => r()));
});

async function probeOnce(probe: string): Promise<{ code: number; line: Record<string, unknown>; err: string[] }> {
  const yaml = `apiVersion: healthprobe.io/v1alpha1
kind: HealthProbePolicy
metadata: {name: web}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  probe: ${probe}
`;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runProbeCommand(["--policy", "p.yaml", "--address", "127.0.0.1"], {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    readFile: async () => yaml,
  });
  return { code, line: out[0] ? (JSON.parse(out[0]) as Record<string, unknown>) : {}, err };
}

describe("the probe command with a TCP probe", () => {
  it.each([
    ["accepts", () => servers.accepting.port, 0, /^TCP connected in \d+ ms$/],
    ["refuses", () => servers.refused, 1, /^connect ECONNREFUSED in \d+ ms$/],
    ["never answers", () => servers.silent.port, 1, /^timeout after 1s$/],
  ])("judges a listener that %s", async (_name, port, code, result) => {
    const r = await probeOnce(`{type: TCP, port: ${port()}, periodSeconds: 1, timeoutSeconds: 1}`);
    expect(r.code).toBe(code);
    expect(r.line).toMatchObject({ success: code === 0, result: expect.stringMatching(result) });
    expect(r.line.statusCode).toBeUndefined();
  });
});

describe("the probe command with a gRPC probe", () => {
  it.each([
    ["", 0, /^gRPC SERVING in \d+ ms$/],
    ["shop.Down", 1, /^gRPC NOT_SERVING in \d+ ms$/],
    ["shop.Gone", 1, /^gRPC SERVICE_UNKNOWN in \d+ ms$/],
    ["shop.Hang", 1, /^timeout after 1s$/],
  ])("judges the service %j", async (service, code, result) => {
    const r = await probeOnce(
      `{type: GRPC, port: ${servers.grpc.port}, grpc: {service: "${service}"}, periodSeconds: 1, timeoutSeconds: 1}`,
    );
    expect(r.code).toBe(code);
    expect(r.line).toMatchObject({ success: code === 0, result: expect.stringMatching(result) });
  });
});

describe("the probe command with a latency threshold", () => {
  it("judges a pod answering 200 in 800 ms against maxLatencyMilliseconds 500 as slow", async () => {
    const r = await probeOnce(
      `{port: ${(slowHttp.address() as AddressInfo).port}, path: /healthz, periodSeconds: 2, timeoutSeconds: 2, match: {maxLatencyMilliseconds: 500}}`,
    );
    expect(r.code).toBe(1);
    expect(r.line).toMatchObject({
      success: false,
      statusCode: 200,
      result: expect.stringMatching(/^slow: \d+ ms > 500 ms$/),
    });
    expect(r.line.latencyMs).toBeGreaterThanOrEqual(800);
    expect(r.line.result).toBe(`slow: ${r.line.latencyMs as number} ms > 500 ms`);
  });
});

describe("the probe command refuses fields a probe type does not use", () => {
  it.each([
    [
      "a path on a TCP probe",
      "{type: TCP, port: 80, path: /healthz}",
      /^spec\.probe\.path: .*may only be set when spec\.probe\.type is HTTP$/,
    ],
    [
      "status codes on a gRPC probe",
      "{type: GRPC, port: 80, match: {statusCodes: ['200']}}",
      /^spec\.probe\.match\.statusCodes: .*may only be set when spec\.probe\.type is HTTP$/,
    ],
    [
      "a threshold not below the timeout",
      "{type: TCP, port: 80, periodSeconds: 1, timeoutSeconds: 1, match: {maxLatencyMilliseconds: 1000}}",
      /^spec\.probe\.match\.maxLatencyMilliseconds: /,
    ],
  ])("exits 2 for %s, naming the field", async (_name, probe, message) => {
    const r = await probeOnce(probe);
    expect(r.code).toBe(2);
    expect(r.err.join("\n")).toMatch(message);
  });
});
