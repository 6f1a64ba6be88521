import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startGrpcHealthServer, type GrpcHealthServer } from "../../../test/support/grpc-health-server.js";
import { refusedPort } from "../../../test/support/tcp-targets.js";
import { computeProbeOutcome } from "../domain/probe-judgement.js";
import type { ProbeFailureKind, ProbeJudgement, ProbeOutcome, ProbeRequest } from "../domain/probe-request.js";
import { defaultUserAgent } from "./http-prober.js";
import { createProber } from "./prober.js";

// The hand-written gRPC health client against a real gRPC server (@grpc/grpc-js), plaintext and TLS.
const fixture = (name: string) => readFileSync(new URL(`./testdata/${name}`, import.meta.url), "utf8");
const CA = fixture("ca.pem");

let plain: GrpcHealthServer;
let tls: GrpcHealthServer;
let http1: Server;
let http1Port: number;

beforeAll(async () => {
  plain = await startGrpcHealthServer();
  tls = await startGrpcHealthServer({ tls: { key: fixture("server-key.pem"), cert: fixture("server.pem") } });
  for (const s of [plain, tls]) {
    s.set("shop.Cart", "SERVING");
    s.set("shop.Down", "NOT_SERVING");
    s.set("shop.Gone", "SERVICE_UNKNOWN");
    s.set("shop.Unset", "UNKNOWN");
    s.set("shop.Hang", "hang");
    s.set("shop.Locked", { error: 7 });
    s.set("shop.Slow", { status: "SERVING", afterMs: 300 });
  }
  http1 = createHttpServer((_req, res) => res.end("not gRPC"));
  await new Promise<void>((r) => http1.listen(0, "127.0.0.1", () => r()));
  http1Port = (http1.address() as AddressInfo).port;
});

afterAll(async () => {
  await plain.close();
  await tls.close();
  http1.closeAllConnections();
  await new Promise<void>((r) => http1.close(() => r()));
});

const probe = createProber();
const aRequest = (o: Partial<ProbeRequest> = {}): ProbeRequest => ({
  type: "GRPC",
  scheme: "HTTP",
  address: "127.0.0.1",
  port: plain.port,
  path: "",
  method: "GET",
  headers: [],
  grpcService: "",
  ...o,
});

async function run(req: ProbeRequest, judgement: Partial<ProbeJudgement> = {}): Promise<ProbeOutcome> {
  const j: ProbeJudgement = { timeoutMs: 2000, statusCodes: [], ...judgement };
  return computeProbeOutcome(await probe(req, j.timeoutMs, false), j);
}

describe("a gRPC health probe", () => {
  const cases: Array<{ name: string; service: string; kind?: ProbeFailureKind; failureClass: string }> = [
    { name: "the server's overall health SERVING passes", service: "", failureClass: "gRPC SERVING" },
    { name: "a named service SERVING passes", service: "shop.Cart", failureClass: "gRPC SERVING" },
    {
      name: "NOT_SERVING fails by its name",
      service: "shop.Down",
      kind: "grpc_status",
      failureClass: "gRPC NOT_SERVING",
    },
    {
      name: "SERVICE_UNKNOWN fails by its name",
      service: "shop.Gone",
      kind: "grpc_status",
      failureClass: "gRPC SERVICE_UNKNOWN",
    },
    {
      name: "the health status UNKNOWN fails",
      service: "shop.Unset",
      kind: "grpc_status",
      failureClass: "gRPC health UNKNOWN",
    },
    {
      name: "a service the server does not know fails with the call's status",
      service: "shop.Nope",
      kind: "grpc_error",
      failureClass: "gRPC NOT_FOUND",
    },
    {
      name: "a call refused with PERMISSION_DENIED fails with it",
      service: "shop.Locked",
      kind: "grpc_error",
      failureClass: "gRPC PERMISSION_DENIED",
    },
  ];
  describe.each([
    ["plaintext (h2c)", () => aRequest()],
    ["TLS (ALPN h2)", () => aRequest({ scheme: "HTTPS", port: tls.port })],
  ])("over %s", (_over, base) => {
    it.each(cases)("$name", async ({ service, kind, failureClass }) => {
      const outcome = await run({ ...base(), grpcService: service });
      expect(outcome).toMatchObject({ success: kind === undefined, failureClass });
      expect(outcome.success ? undefined : outcome.failureKind).toBe(kind);
      expect(outcome.result).toMatch(new RegExp(`^${failureClass} in \\d+ ms$`));
    });

    it("times out on a server that never answers", async () => {
      const started = Date.now();
      const outcome = await run({ ...base(), grpcService: "shop.Hang" }, { timeoutMs: 400 });
      expect(outcome).toMatchObject({ success: false, failureKind: "timeout", failureClass: "timeout after 400ms" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    });
  });

  it("sends the host as :authority, the headers as metadata, our User-Agent and a signature the app can verify", async () => {
    const key = new TextEncoder().encode("probe-signing-key");
    const outcome = await run(
      aRequest({
        grpcService: "shop.Cart",
        host: "cart.example:8443",
        headers: [{ name: "X-Env", value: "prod" }],
        signatureKey: key,
      }),
    );
    expect(outcome.success).toBe(true);
    const call = plain.calls.findLast((c) => c.service === "shop.Cart");
    expect(call?.authority).toBe("cart.example:8443");
    expect(call?.metadata["x-env"]).toBe("prod");
    expect(call?.metadata["user-agent"]).toContain(defaultUserAgent());
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(call?.metadata["x-healthprobe-signature"] ?? "");
    expect(m).not.toBeNull();
    expect(m?.[2]).toBe(createHmac("sha256", key).update(`${m?.[1]}.POST./grpc.health.v1.Health/Check`).digest("hex"));
  });

  it("verifies TLS against the caBundle and the host, and fails on a name the certificate lacks", async () => {
    expect(await run(aRequest({ scheme: "HTTPS", port: tls.port, host: "probe.test", caBundle: CA }))).toMatchObject({
      success: true,
    });
    expect(await run(aRequest({ scheme: "HTTPS", port: tls.port, host: "other.test", caBundle: CA }))).toMatchObject({
      success: false,
      failureKind: "tls",
      failureClass: "TLS: certificate is not valid for other.test",
    });
  });

  it("fails as connect ECONNREFUSED on a port nothing listens on", async () => {
    expect(await run(aRequest({ port: await refusedPort() }))).toMatchObject({
      success: false,
      failureKind: "connect",
      failureClass: "connect ECONNREFUSED",
    });
  });

  it.each([
    [
      "plaintext to a TLS server",
      () => aRequest({ port: tls.port }),
      "connect",
      "connection closed before the response",
    ],
    [
      "plaintext to an HTTP/1.1 server",
      () => aRequest({ port: http1Port }),
      "other",
      "not an HTTP/2 server: Protocol error",
    ],
    [
      "TLS to a plaintext server",
      () => aRequest({ scheme: "HTTPS", port: plain.port }),
      "tls",
      "TLS: wrong version number",
    ],
  ])("fails, naming why, for %s", async (_name, req, failureKind, failureClass) => {
    expect(await run(req())).toMatchObject({ success: false, failureKind, failureClass });
  });

  it("holds a SERVING answer to the latency threshold, measured to the end of the call", async () => {
    const outcome = await run(aRequest({ grpcService: "shop.Slow" }), { maxLatencyMs: 100 });
    expect(outcome).toMatchObject({ success: false, failureKind: "slow", failureClass: "slow: over 100 ms" });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(300);
    expect(outcome.result).toMatch(/^slow: \d{3,} ms > 100 ms$/);
  });
});
