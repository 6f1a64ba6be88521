import { describe, expect, it } from "@jest/globals";
import { computeProbeOutcome, formatDuration, judgeStatus } from "./probe-judgement.js";
import { computeProbeKey } from "./probe-key.js";
import { resolveProbePort } from "./probe-port.js";
import type { ProbeFailureKind, ProbeJudgement, ProbeRequest, RawProbeResult } from "./probe-request.js";

const aRequest = (o: Partial<ProbeRequest> = {}): ProbeRequest => ({
  scheme: "HTTP",
  address: "10.0.0.1",
  port: 8080,
  path: "/healthz",
  method: "GET",
  headers: [],
  ...o,
});
const aJudgement = (o: Partial<ProbeJudgement> = {}): ProbeJudgement => ({
  timeoutMs: 1000,
  statusCodes: [[200, 299]],
  ...o,
});
const aResponse = (o: Partial<Extract<RawProbeResult, { kind: "response" }>> = {}): RawProbeResult => ({
  kind: "response",
  statusCode: 200,
  sentAtMs: 2,
  headersAtMs: 12,
  endAtMs: 20,
  finishedAt: 5_000,
  ...o,
});

describe("computeProbeKey", () => {
  const base = aRequest({
    headers: [
      { name: "X-A", value: "1" },
      { name: "X-B", value: "2" },
    ],
  });
  const same: Array<[string, ProbeRequest]> = [
    [
      "headers in another order",
      aRequest({
        headers: [
          { name: "X-B", value: "2" },
          { name: "X-A", value: "1" },
        ],
      }),
    ],
    [
      "header names in another case",
      aRequest({
        headers: [
          { name: "x-a", value: "1" },
          { name: "x-b", value: "2" },
        ],
      }),
    ],
    ["a caBundle on plain HTTP", { ...base, caBundle: "PEM" }],
  ];
  it.each(same)("is the same for %s", (_name, other) => expect(computeProbeKey(other)).toBe(computeProbeKey(base)));

  const different: Array<[string, ProbeRequest]> = [
    ["another address", { ...base, address: "10.0.0.2" }],
    ["another port", { ...base, port: 8081 }],
    ["another scheme", { ...base, scheme: "HTTPS" }],
    ["another method", { ...base, method: "HEAD" }],
    ["another path", { ...base, path: "/ready" }],
    ["another host", { ...base, host: "a.example" }],
    [
      "another header value",
      aRequest({
        headers: [
          { name: "X-A", value: "1" },
          { name: "X-B", value: "3" },
        ],
      }),
    ],
    [
      "repeated headers in another order",
      aRequest({
        headers: [
          { name: "X-B", value: "2" },
          { name: "X-A", value: "1" },
          { name: "X-A", value: "0" },
        ],
      }),
    ],
    ["a CA bundle on HTTPS", { ...base, scheme: "HTTPS", caBundle: "PEM" }],
    ["a signature key", { ...base, signatureKey: new Uint8Array([1, 2]) }],
  ];
  it.each(different)("differs for %s", (_name, other) =>
    expect(computeProbeKey(other)).not.toBe(computeProbeKey(base)),
  );

  it("keeps the key of a request that names HTTP as its type", () =>
    expect(computeProbeKey({ ...base, type: "HTTP" })).toBe(computeProbeKey(base)));

  it("differs for another type, and for another gRPC service", () => {
    const grpc = { ...base, type: "GRPC" as const, grpcService: "" };
    expect(computeProbeKey(grpc)).not.toBe(computeProbeKey(base));
    expect(computeProbeKey({ ...grpc, grpcService: "shop.Cart" })).not.toBe(computeProbeKey(grpc));
  });

  it("is the address and port alone for TCP, which sends nothing else", () => {
    const tcp = { ...base, type: "TCP" as const };
    expect(computeProbeKey({ ...tcp, headers: [], host: "a.example", path: "" })).toBe(computeProbeKey(tcp));
    expect(computeProbeKey({ ...tcp, port: 8081 })).not.toBe(computeProbeKey(tcp));
    expect(computeProbeKey(tcp)).not.toBe(computeProbeKey(base));
  });

  it("tells signature keys apart by content", () => {
    const a = computeProbeKey({ ...base, signatureKey: new Uint8Array([1, 2]) });
    expect(computeProbeKey({ ...base, signatureKey: new Uint8Array([1, 2]) })).toBe(a);
    expect(computeProbeKey({ ...base, signatureKey: new Uint8Array([1, 3]) })).not.toBe(a);
  });
});

describe("resolveProbePort", () => {
  const containers = [
    {
      ports: [
        { name: "metrics", containerPort: 9090 },
        { name: "dns", containerPort: 53, protocol: "UDP" },
      ],
    },
    {
      ports: [
        { name: "http", containerPort: 8080, protocol: "TCP" },
        { name: "dns", containerPort: 5353 },
      ],
    },
    {},
  ];
  const cases: Array<[string, number | string, { port: number } | { error: string }]> = [
    ["a number as is", 8443, { port: 8443 }],
    ["a numeric string as a number", "8443", { port: 8443 }],
    ["a name in a later container", "http", { port: 8080 }],
    ["a name, skipping UDP ports", "dns", { port: 5353 }],
    ["an unknown name to an error", "admin", { error: 'no TCP container port named "admin" in the pod' }],
    ["an out-of-range number to an error", 70000, { error: "port 70000 is outside 1-65535" }],
  ];
  it.each(cases)("resolves %s", (_n, port, expected) => expect(resolveProbePort(port, containers)).toEqual(expected));
});

describe("computeProbeOutcome", () => {
  const cases: Array<{
    name: string;
    raw: RawProbeResult;
    judgement?: Partial<ProbeJudgement>;
    success: boolean;
    kind?: ProbeFailureKind;
    failureClass: string;
    result: string;
    latencyMs: number;
  }> = [
    {
      name: "a 2xx passes, latency to the last body byte even when the body is not judged",
      raw: aResponse(),
      success: true,
      failureClass: "HTTP 200",
      result: "HTTP 200 in 18 ms",
      latencyMs: 18,
    },
    {
      name: "latency runs to the last body byte when the body is needed",
      raw: aResponse({ body: "ok Healthy" }),
      judgement: { bodyContains: "Healthy" },
      success: true,
      failureClass: "HTTP 200",
      result: "HTTP 200 in 18 ms",
      latencyMs: 18,
    },
    {
      name: "an unlisted redirect is named",
      raw: aResponse({ statusCode: 308 }),
      success: false,
      kind: "redirect",
      failureClass: "redirect 308 not followed",
      result: "redirect 308 not followed in 18 ms",
      latencyMs: 18,
    },
    {
      name: "a status fails before the body is looked at",
      raw: aResponse({ statusCode: 500, body: "Healthy" }),
      judgement: { bodyContains: "Healthy" },
      success: false,
      kind: "http_status",
      failureClass: "HTTP 500",
      result: "HTTP 500 in 18 ms",
      latencyMs: 18,
    },
    {
      name: "a missing substring fails",
      raw: aResponse({ body: "nope" }),
      judgement: { bodyContains: "Healthy" },
      success: false,
      kind: "body",
      failureClass: 'body did not contain "Healthy"',
      result: 'body did not contain "Healthy" in 18 ms',
      latencyMs: 18,
    },
    {
      name: "a body that ends after this owner's timeout is a timeout, even when it is not judged",
      raw: aResponse({ headersAtMs: 100, endAtMs: 1500 }),
      success: false,
      kind: "timeout",
      failureClass: "timeout after 1s",
      result: "timeout after 1s",
      latencyMs: 1000,
    },
    {
      name: "a response later than this owner's timeout is a timeout",
      raw: aResponse({ headersAtMs: 1500, endAtMs: 1500 }),
      success: false,
      kind: "timeout",
      failureClass: "timeout after 1s",
      result: "timeout after 1s",
      latencyMs: 1000,
    },
    {
      name: "a timeout names the owner's timeout",
      raw: { kind: "timeout", timeoutMs: 5000, finishedAt: 1 },
      judgement: { timeoutMs: 60_000 },
      success: false,
      kind: "timeout",
      failureClass: "timeout after 60s",
      result: "timeout after 60s",
      latencyMs: 60_000,
    },
    {
      name: "a connect error keeps its name",
      raw: { kind: "error", failureKind: "connect", error: "connect ECONNREFUSED", endAtMs: 1, finishedAt: 1 },
      success: false,
      kind: "connect",
      failureClass: "connect ECONNREFUSED",
      result: "connect ECONNREFUSED in 1 ms",
      latencyMs: 1,
    },
    {
      name: "an error after this owner's timeout is a timeout",
      raw: {
        kind: "error",
        failureKind: "connect",
        error: "connection reset by peer",
        sentAtMs: 1,
        endAtMs: 4000,
        finishedAt: 1,
      },
      success: false,
      kind: "timeout",
      failureClass: "timeout after 1s",
      result: "timeout after 1s",
      latencyMs: 1000,
    },
  ];
  it.each(cases)("$name", ({ raw, judgement, success, kind, failureClass, result, latencyMs }) => {
    const o = computeProbeOutcome(raw, aJudgement(judgement));
    expect(o).toMatchObject({ success, failureClass, result, latencyMs, finishedAt: raw.finishedAt });
    expect(o.success ? undefined : o.failureKind).toBe(kind);
  });

  const grpc = (o: Partial<Extract<RawProbeResult, { kind: "grpc" }>> = {}): RawProbeResult => ({
    kind: "grpc",
    grpcStatus: 0,
    servingStatus: 1,
    sentAtMs: 2,
    endAtMs: 7,
    finishedAt: 5_000,
    ...o,
  });
  const kinds: Array<{
    name: string;
    raw: RawProbeResult;
    judgement?: Partial<ProbeJudgement>;
    kind?: ProbeFailureKind;
    failureClass: string;
    result: string;
  }> = [
    {
      name: "a TCP connect passes, its latency the connect time",
      raw: { kind: "connected", endAtMs: 3.2, finishedAt: 1 },
      failureClass: "TCP connected",
      result: "TCP connected in 3 ms",
    },
    {
      name: "a TCP connect after this owner's timeout is a timeout",
      raw: { kind: "connected", endAtMs: 1500, finishedAt: 1 },
      kind: "timeout",
      failureClass: "timeout after 1s",
      result: "timeout after 1s",
    },
    { name: "gRPC SERVING passes", raw: grpc(), failureClass: "gRPC SERVING", result: "gRPC SERVING in 5 ms" },
    {
      name: "gRPC NOT_SERVING fails by its name",
      raw: grpc({ servingStatus: 2 }),
      kind: "grpc_status",
      failureClass: "gRPC NOT_SERVING",
      result: "gRPC NOT_SERVING in 5 ms",
    },
    {
      name: "gRPC SERVICE_UNKNOWN fails by its name",
      raw: grpc({ servingStatus: 3 }),
      kind: "grpc_status",
      failureClass: "gRPC SERVICE_UNKNOWN",
      result: "gRPC SERVICE_UNKNOWN in 5 ms",
    },
    {
      name: "the health status UNKNOWN (or none) fails, told apart from the call's UNKNOWN",
      raw: grpc({ servingStatus: undefined }),
      kind: "grpc_status",
      failureClass: "gRPC health UNKNOWN",
      result: "gRPC health UNKNOWN in 5 ms",
    },
    {
      name: "a gRPC error fails by its status name",
      raw: grpc({ grpcStatus: 12, servingStatus: undefined }),
      kind: "grpc_error",
      failureClass: "gRPC UNIMPLEMENTED",
      result: "gRPC UNIMPLEMENTED in 5 ms",
    },
    {
      name: "the call's UNKNOWN is a gRPC error",
      raw: grpc({ grpcStatus: 2 }),
      kind: "grpc_error",
      failureClass: "gRPC UNKNOWN",
      result: "gRPC UNKNOWN in 5 ms",
    },
    {
      name: "a slow HTTP success is a failure with both numbers",
      raw: aResponse({ sentAtMs: 0, endAtMs: 812 }),
      judgement: { maxLatencyMs: 500 },
      kind: "slow",
      failureClass: "slow: over 500 ms",
      result: "slow: 812 ms > 500 ms",
    },
    {
      name: "an answer at the threshold passes",
      raw: aResponse({ sentAtMs: 0, endAtMs: 500.4 }),
      judgement: { maxLatencyMs: 500 },
      failureClass: "HTTP 200",
      result: "HTTP 200 in 500 ms",
    },
    {
      name: "a slow failure keeps its own reason",
      raw: aResponse({ statusCode: 503, sentAtMs: 0, endAtMs: 812 }),
      judgement: { maxLatencyMs: 500 },
      kind: "http_status",
      failureClass: "HTTP 503",
      result: "HTTP 503 in 812 ms",
    },
    {
      name: "a slow TCP connect is slow",
      raw: { kind: "connected", endAtMs: 30, finishedAt: 1 },
      judgement: { maxLatencyMs: 20 },
      kind: "slow",
      failureClass: "slow: over 20 ms",
      result: "slow: 30 ms > 20 ms",
    },
    {
      name: "a slow gRPC SERVING is slow",
      raw: grpc({ endAtMs: 702 }),
      judgement: { maxLatencyMs: 500 },
      kind: "slow",
      failureClass: "slow: over 500 ms",
      result: "slow: 700 ms > 500 ms",
    },
  ];
  it.each(kinds)("$name", ({ raw, judgement, kind, failureClass, result }) => {
    const o = computeProbeOutcome(raw, aJudgement(judgement));
    expect(o).toMatchObject({ success: kind === undefined, failureClass, result });
    expect(o.success ? undefined : o.failureKind).toBe(kind);
  });

  it.each(["connect", "tls", "other"] as const)(
    "keeps the prober's kind %s for an error within the timeout",
    (failureKind) => {
      const o = computeProbeOutcome(
        { kind: "error", failureKind, error: "whatever it was", endAtMs: 5, finishedAt: 1 },
        aJudgement(),
      );
      expect(o).toMatchObject({ success: false, failureKind, failureClass: "whatever it was" });
    },
  );

  it("keeps the status code on a body failure and drops it on a transport failure", () => {
    expect(computeProbeOutcome(aResponse({ body: "" }), aJudgement({ bodyContains: "x" })).statusCode).toBe(200);
    expect(
      computeProbeOutcome({ kind: "error", failureKind: "other", error: "e", endAtMs: 0, finishedAt: 0 }, aJudgement())
        .statusCode,
    ).toBeUndefined();
  });
});

describe("judgeStatus and formatDuration", () => {
  it("uses the 2xx default for an empty list", () => {
    expect(judgeStatus(204, [])).toEqual({ ok: true });
    expect(judgeStatus(302, [])).toEqual({ ok: false, kind: "redirect", reason: "redirect 302 not followed" });
    expect(judgeStatus(404, [])).toEqual({ ok: false, kind: "http_status", reason: "HTTP 404" });
  });
  it.each([
    [60_000, "60s"],
    [1_000, "1s"],
    [300, "300ms"],
    [1_500, "1500ms"],
  ])("formats %d ms as %s", (ms, text) => expect(formatDuration(ms)).toBe(text));
});
