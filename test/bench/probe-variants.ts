// Ways of sending one probe on a fresh connection, to compare their CPU cost with the engine's
// own prober under the same scheduler. Only the engine's prober (net) is used by the operator.
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { performance } from "node:perf_hooks";
import { Agent, Client, request as undiciRequest } from "undici";
import { createHttpProber, defaultUserAgent, type ProbeExecutor } from "../../operator/src/adapters/http-prober.js";
import type { ProbeRequest, RawProbeResult } from "../../operator/src/domain/probe-request.js";

const userAgent = defaultUserAgent();

function origin(req: ProbeRequest): string {
  const host = req.address.includes(":") ? `[${req.address}]` : req.address;
  return `${req.scheme === "HTTPS" ? "https" : "http"}://${host}:${req.port}`;
}

function headersOf(req: ProbeRequest): Record<string, string> {
  const h: Record<string, string> = { "user-agent": userAgent };
  if (req.host) h.host = req.host;
  for (const x of req.headers) h[x.name] = x.value;
  return h;
}

function response(statusCode: number, start: number): RawProbeResult {
  const end = performance.now() - start;
  return { kind: "response", statusCode, sentAtMs: 0, headersAtMs: end, endAtMs: end, finishedAt: Date.now() };
}

function failure(err: unknown, start: number): RawProbeResult {
  const e = err as { code?: string; name?: string; message?: string };
  return {
    kind: "error",
    failureKind: "other",
    error: e.code ?? e.name ?? String(e.message),
    endAtMs: performance.now() - start,
    finishedAt: Date.now(),
  };
}

/** undici Client per probe, no pipelining, closed after the response. */
const undiciClient: ProbeExecutor = async (req, timeoutMs) => {
  const start = performance.now();
  const client = new Client(origin(req), { pipelining: 0, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const res = await client.request({ path: req.path, method: req.method, headers: headersOf(req) });
    await res.body.dump();
    return response(res.statusCode, start);
  } catch (err) {
    return failure(err, start);
  } finally {
    void client.destroy().catch(() => {});
  }
};

/** undici Client per probe with connect options (timeout, noDelay) and `reset` to close after the request. */
const undiciClientConnect: ProbeExecutor = async (req, timeoutMs) => {
  const start = performance.now();
  const client = new Client(origin(req), {
    pipelining: 1,
    connect: { timeout: timeoutMs, noDelay: true },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  try {
    const res = await client.request({ path: req.path, method: req.method, headers: headersOf(req), reset: true });
    await res.body.dump();
    return response(res.statusCode, start);
  } catch (err) {
    return failure(err, start);
  } finally {
    void client.destroy().catch(() => {});
  }
};

/** undici.request with a fresh Agent (dispatcher) per probe. */
const undiciFreshAgent: ProbeExecutor = async (req, timeoutMs) => {
  const start = performance.now();
  const agent = new Agent({
    pipelining: 0,
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  try {
    const res = await undiciRequest(`${origin(req)}${req.path}`, {
      method: req.method,
      headers: headersOf(req),
      dispatcher: agent,
    });
    await res.body.dump();
    return response(res.statusCode, start);
  } catch (err) {
    return failure(err, start);
  } finally {
    void agent.destroy().catch(() => {});
  }
};

/** node:http with agent: false (a new socket per request, llhttp parser). */
const nodeHttp: ProbeExecutor = (req, timeoutMs) =>
  new Promise((resolve) => {
    const start = performance.now();
    const r = httpRequest(
      {
        host: req.address,
        port: req.port,
        path: req.path,
        method: req.method,
        agent: false,
        headers: { ...headersOf(req), connection: "close" },
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(response(res.statusCode ?? 0, start)));
        res.on("error", (err) => resolve(failure(err, start)));
      },
    );
    r.on("timeout", () => r.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    r.on("error", (err) => resolve(failure(err, start)));
    r.end();
  });

/**
 * The least a fresh connection costs in Node: connect, one write, the first read taken as the
 * answer, a reset. No parser, no timer, no judgement: the floor under any prober built on node:net.
 */
const netFloor: ProbeExecutor = (req) =>
  new Promise((resolve) => {
    const start = performance.now();
    const socket = connect({ host: req.address, port: req.port });
    socket.once("connect", () => socket.write(floorRequest));
    socket.once("data", () => {
      socket.resetAndDestroy();
      resolve(response(200, start));
    });
    socket.once("error", (err) => resolve(failure(err, start)));
  });
const floorRequest = Buffer.from("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", "latin1");

export const PROBE_VARIANTS: Record<string, () => ProbeExecutor> = {
  /** The engine's prober: node:net and its own response parser. */
  net: () => createHttpProber(),
  "net-floor": () => netFloor,
  "node-http": () => nodeHttp,
  "undici-client": () => undiciClient,
  "undici-client-connect": () => undiciClientConnect,
  "undici-request-fresh-agent": () => undiciFreshAgent,
};
