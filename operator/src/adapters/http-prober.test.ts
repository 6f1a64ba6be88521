import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { computeProbeOutcome } from "../domain/probe-judgement.js";
import type { ProbeJudgement, ProbeOutcome, ProbeRequest } from "../domain/probe-request.js";
import { createHttpProber, defaultUserAgent } from "./http-prober.js";

const fixture = (name: string) => readFileSync(new URL(`./testdata/${name}`, import.meta.url), "utf8");
const CA = fixture("ca.pem");
const OTHER_CA = fixture("other-ca.pem");

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  servername?: string | false | null;
}

let http: Server;
let https: Server;
let httpPort: number;
let httpsPort: number;
const seen: Seen[] = [];

function handler(req: IncomingMessage, res: ServerResponse): void {
  seen.push({
    method: req.method ?? "",
    url: req.url ?? "",
    headers: req.headers,
    servername: (req.socket as TLSSocket).servername,
  });
  const url = new URL(req.url ?? "/", "http://x");
  const status = Number(url.searchParams.get("status") ?? 200);
  if (url.pathname === "/chunked") {
    res.writeHead(200, { "content-type": "text/plain" }); // no content-length: chunked
    res.write("first part, ");
    setImmediate(() => res.end("then Healthy at the end"));
    return;
  }
  if (url.pathname === "/big-then-needle") {
    res.writeHead(200);
    res.write("a".repeat(70 * 1024));
    res.end("Healthy");
    return;
  }
  if (url.pathname === "/redirect") {
    res.writeHead(status, { location: "/elsewhere" });
    res.end();
    return;
  }
  res.writeHead(status, { "content-length": 7 });
  res.end(req.method === "HEAD" ? undefined : "Healthy");
}

function listen(server: Server | NetServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

function close(server: Server | NetServer): Promise<void> {
  return new Promise((resolve) => {
    (server as Server).closeAllConnections?.();
    server.close(() => resolve());
  });
}

beforeAll(async () => {
  http = createHttpServer(handler);
  https = createHttpsServer({ key: fixture("server-key.pem"), cert: fixture("server.pem") }, handler);
  httpPort = await listen(http);
  httpsPort = await listen(https);
});

afterAll(async () => {
  await close(http);
  await close(https);
});

const probe = createHttpProber();

function aRequest(overrides: Partial<ProbeRequest> = {}): ProbeRequest {
  return {
    scheme: "HTTP",
    address: "127.0.0.1",
    port: httpPort,
    path: "/healthz",
    method: "GET",
    headers: [],
    ...overrides,
  };
}

function aJudgement(overrides: Partial<ProbeJudgement> = {}): ProbeJudgement {
  return { timeoutMs: 2000, statusCodes: [[200, 299]], ...overrides };
}

async function run(req: ProbeRequest, judgement: ProbeJudgement = aJudgement()): Promise<ProbeOutcome> {
  const needsBody = !!judgement.bodyContains;
  return computeProbeOutcome(await probe(req, judgement.timeoutMs, needsBody), judgement);
}

describe("status codes", () => {
  const cases: Array<{
    name: string;
    path: string;
    codes?: Array<[number, number]>;
    success: boolean;
    failureClass: string;
  }> = [
    { name: "a 200 passes the 2xx default", path: "/healthz", success: true, failureClass: "HTTP 200" },
    { name: "a 503 fails with its code", path: "/healthz?status=503", success: false, failureClass: "HTTP 503" },
    {
      name: "a 301 is not followed and fails by default",
      path: "/redirect?status=301",
      success: false,
      failureClass: "redirect 301 not followed",
    },
    {
      name: "a 302 is not followed and fails by default",
      path: "/redirect?status=302",
      success: false,
      failureClass: "redirect 302 not followed",
    },
    {
      name: "a 307 is not followed and fails by default",
      path: "/redirect?status=307",
      success: false,
      failureClass: "redirect 307 not followed",
    },
    {
      name: "a 302 passes when listed",
      path: "/redirect?status=302",
      codes: [
        [200, 200],
        [302, 302],
      ],
      success: true,
      failureClass: "HTTP 302",
    },
    {
      name: "a 302 passes a 200-399 range",
      path: "/redirect?status=302",
      codes: [[200, 399]],
      success: true,
      failureClass: "HTTP 302",
    },
    {
      name: "a 404 fails a 200-399 range",
      path: "/healthz?status=404",
      codes: [[200, 399]],
      success: false,
      failureClass: "HTTP 404",
    },
  ];
  it.each(cases)("$name", async ({ path, codes, success, failureClass }) => {
    const outcome = await run(aRequest({ path }), aJudgement(codes ? { statusCodes: codes } : {}));
    expect(outcome.success).toBe(success);
    expect(outcome.failureClass).toBe(failureClass);
    expect(outcome.result).toBe(`${failureClass} in ${Math.round(outcome.latencyMs)} ms`);
  });
});

describe("what the server sees", () => {
  it("sends HEAD when asked, with our User-Agent and Connection: close", async () => {
    seen.length = 0;
    const outcome = await run(aRequest({ method: "HEAD", path: "/head-check" }));
    expect(outcome.success).toBe(true);
    const req = seen.find((s) => s.url === "/head-check");
    expect(req?.method).toBe("HEAD");
    expect(req?.headers["user-agent"]).toBe(defaultUserAgent());
    expect(defaultUserAgent()).toMatch(/^healthprobe-operator\/\d+\.\d+\.\d+/);
    expect(req?.headers["connection"]).toBe("close");
  });

  it("sends the host as Host header while connecting to the address, and the configured headers", async () => {
    seen.length = 0;
    await run(
      aRequest({
        path: "/host-check",
        host: "app.example.com",
        headers: [
          { name: "X-Env", value: "prod" },
          { name: "Authorization", value: "Bearer s3cret" },
        ],
      }),
    );
    const req = seen.find((s) => s.url === "/host-check");
    expect(req?.headers.host).toBe("app.example.com");
    expect(req?.headers["x-env"]).toBe("prod");
    expect(req?.headers.authorization).toBe("Bearer s3cret");
  });

  it("defaults the Host header to address:port", async () => {
    seen.length = 0;
    await run(aRequest({ path: "/default-host" }));
    expect(seen.find((s) => s.url === "/default-host")?.headers.host).toBe(`127.0.0.1:${httpPort}`);
  });

  it("signs with an HMAC the app can verify, and a replayed old timestamp is told apart", async () => {
    const key = new TextEncoder().encode("probe-signing-key");
    let clock = 1_800_000_000_000;
    const signed = createHttpProber({ now: () => clock });
    seen.length = 0;
    await signed(aRequest({ path: "/signed", signatureKey: key }), 2000, false);
    clock += 120_000;
    await signed(aRequest({ path: "/signed", signatureKey: key }), 2000, false);
    const sigs = seen.filter((s) => s.url === "/signed").map((s) => String(s.headers["x-healthprobe-signature"]));
    expect(sigs).toHaveLength(2);
    const parsed = sigs.map((h) => /^t=(\d+),v1=([0-9a-f]{64})$/.exec(h));
    for (const m of parsed) {
      expect(m).not.toBeNull();
      const expected = createHmac("sha256", "probe-signing-key").update(`${m![1]}.GET./signed`).digest("hex");
      expect(m![2]).toBe(expected);
    }
    expect(Number(parsed[0]![1])).toBe(1_800_000_000);
    expect(Number(parsed[1]![1])).toBe(1_800_000_120);
    // An app accepting only fresh timestamps (here: within 60 s of its clock) rejects the first one replayed now.
    const appNow = clock / 1000;
    expect(Math.abs(appNow - Number(parsed[0]![1])) > 60).toBe(true);
    expect(Math.abs(appNow - Number(parsed[1]![1])) <= 60).toBe(true);
  });

  it("rejects a header value with a line break without sending anything", async () => {
    const outcome = await run(aRequest({ headers: [{ name: "X-Bad", value: "a\r\nInjected: yes" }] }));
    expect(outcome.success).toBe(false);
    expect(outcome).toMatchObject({ failureKind: "other", failureClass: "invalid value for header X-Bad" });
  });
});

describe("bodyContains", () => {
  it("is found in a chunked body", async () => {
    const outcome = await run(aRequest({ path: "/chunked" }), aJudgement({ bodyContains: "Healthy" }));
    expect(outcome).toMatchObject({ success: true, failureClass: "HTTP 200" });
  });

  it("is found in a content-length body", async () => {
    const outcome = await run(aRequest(), aJudgement({ bodyContains: "Heal" }));
    expect(outcome.success).toBe(true);
  });

  it("is not found past the first 64 KiB", async () => {
    const outcome = await run(aRequest({ path: "/big-then-needle" }), aJudgement({ bodyContains: "Healthy" }));
    expect(outcome).toMatchObject({
      success: false,
      statusCode: 200,
      failureKind: "body",
      failureClass: 'body did not contain "Healthy"',
    });
  });

  it("fails when absent", async () => {
    const outcome = await run(aRequest(), aJudgement({ bodyContains: "Ready" }));
    expect(outcome.failureClass).toBe('body did not contain "Ready"');
  });
});

describe("HTTPS", () => {
  const tls = (overrides: Partial<ProbeRequest> = {}) => aRequest({ scheme: "HTTPS", port: httpsPort, ...overrides });

  it("does not verify the certificate without a caBundle", async () => {
    expect((await run(tls())).success).toBe(true);
  });

  it("verifies against the caBundle and the host, and the server sees the host as SNI", async () => {
    seen.length = 0;
    const outcome = await run(tls({ path: "/sni", host: "probe.test", caBundle: CA }));
    expect(outcome).toMatchObject({ success: true, failureClass: "HTTP 200" });
    const req = seen.find((s) => s.url === "/sni");
    expect(req?.servername).toBe("probe.test");
    expect(req?.headers.host).toBe("probe.test");
  });

  it("verifies against the address when no host is set", async () => {
    expect((await run(tls({ caBundle: CA }))).success).toBe(true);
  });

  it("fails with unknown authority when the caBundle is another CA", async () => {
    const outcome = await run(tls({ host: "probe.test", caBundle: OTHER_CA }));
    expect(outcome).toMatchObject({
      success: false,
      failureKind: "tls",
      failureClass: "TLS: certificate signed by unknown authority",
    });
  });

  it("fails when the certificate does not name the host", async () => {
    const outcome = await run(tls({ host: "other.test", caBundle: CA }));
    expect(outcome).toMatchObject({
      success: false,
      failureKind: "tls",
      failureClass: "TLS: certificate is not valid for other.test",
    });
  });

  it("names a TLS failure when the server speaks plain HTTP", async () => {
    const outcome = await run(tls({ port: httpPort }));
    expect(outcome.success).toBe(false);
    expect(outcome.failureClass).toMatch(/^TLS: /);
    expect(outcome).toMatchObject({ failureKind: "tls" });
  });
});

describe("hostile and broken targets", () => {
  const servers: NetServer[] = [];
  const sockets = new Set<Socket>();
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map(close));
  });

  async function netTarget(onConnection: (socket: Socket) => void): Promise<number> {
    const server = createNetServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
      onConnection(socket);
    });
    servers.push(server);
    return listen(server);
  }

  async function timed(req: ProbeRequest, judgement: ProbeJudgement): Promise<{ outcome: ProbeOutcome; ms: number }> {
    const started = performance.now();
    const outcome = await run(req, judgement);
    return { outcome, ms: performance.now() - started };
  }

  it("times out on a server that never answers", async () => {
    const port = await netTarget(() => {});
    const { outcome, ms } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 300 }));
    expect(outcome).toMatchObject({
      success: false,
      failureKind: "timeout",
      failureClass: "timeout after 300ms",
      result: "timeout after 300ms",
    });
    expect(ms).toBeLessThan(1500);
  });

  it.each([
    { every: 1000, timeoutMs: 500 },
    { every: 40, timeoutMs: 400 },
  ])("times out on a server that drips its response a byte every $every ms", async ({ every, timeoutMs }) => {
    const port = await netTarget((socket) => {
      const text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
      let i = 0;
      socket.write(text[i++] as string);
      const t = setInterval(
        () => (i < text.length && !socket.destroyed ? socket.write(text[i++] as string) : clearInterval(t)),
        every,
      );
      socket.on("close", () => clearInterval(t));
    });
    const { outcome, ms } = await timed(aRequest({ port }), aJudgement({ timeoutMs }));
    expect(outcome.failureClass).toBe(`timeout after ${timeoutMs}ms`);
    expect(ms).toBeLessThan(timeoutMs + 1000);
  });

  it.each([
    { name: "a chunked body that drips", head: "Transfer-Encoding: chunked", drip: "1\r\nx\r\n" },
    { name: "a content-length body that stops half-way", head: "Content-Length: 100", drip: "" },
    { name: "a close-delimited body that never closes", head: "Connection: close", drip: "x" },
  ])("times out on $name, whether or not the body is judged", async ({ head, drip }) => {
    const port = await netTarget((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\n${head}\r\n\r\n${head.startsWith("Content") ? "half" : ""}`);
      const t = setInterval(() => (socket.destroyed ? clearInterval(t) : drip && socket.write(drip)), 30);
      socket.on("close", () => clearInterval(t));
    });
    for (const judgement of [aJudgement({ timeoutMs: 400, bodyContains: "Healthy" }), aJudgement({ timeoutMs: 400 })]) {
      const { outcome, ms } = await timed(aRequest({ port }), judgement);
      expect(outcome.failureClass).toBe("timeout after 400ms");
      expect(ms).toBeLessThan(1400);
    }
  });

  it("passes a slow but complete body within the timeout, its latency covering the body", async () => {
    const port = await netTarget((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel");
      setTimeout(() => socket.destroyed || socket.write("lo"), 250);
    });
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 2000 }));
    expect(outcome).toMatchObject({ success: true, failureClass: "HTTP 200" });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(240);
  });

  it("judges a body over 64 KiB that keeps streaming at its first 64 KiB", async () => {
    const port = await netTarget((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      const t = setInterval(() => (socket.destroyed ? clearInterval(t) : socket.write("1\r\nx\r\n")), 30);
      socket.on("close", () => clearInterval(t));
      setTimeout(
        () => socket.destroyed || socket.write(`${(70 * 1024).toString(16)}\r\n${"a".repeat(70 * 1024)}\r\n`),
        250,
      );
    });
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 3000 }));
    expect(outcome).toMatchObject({ success: true, failureClass: "HTTP 200" });
    // Done when the 64th KiB arrived, not at the headers, and not waiting for the endless rest.
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(240);
  });

  function gigabyteTarget(written: { bytes: number }): Promise<number> {
    const block = Buffer.alloc(64 * 1024, "x");
    return netTarget((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n");
      const pump = () => {
        while (written.bytes < 1024 ** 3 && !socket.destroyed) {
          written.bytes += block.length;
          if (!socket.write(block)) return void socket.once("drain", pump);
        }
      };
      pump();
    });
  }

  it("reads at most 64 KiB of a 1 GB body, then hangs up, with bounded memory", async () => {
    const written = { bytes: 0 };
    const port = await gigabyteTarget(written);
    const before = process.memoryUsage();
    const { outcome, ms } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000, bodyContains: "Healthy" }));
    const after = process.memoryUsage();
    expect(outcome).toMatchObject({ success: false, failureClass: 'body did not contain "Healthy"' });
    expect(ms).toBeLessThan(1000);
    expect(written.bytes).toBeLessThan(64 * 1024 * 1024);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(32 * 1024 * 1024);
    expect(after.rss - before.rss).toBeLessThan(64 * 1024 * 1024);
  });

  it("stops after the first 64 KiB of a 1 GB response when no body check needs it", async () => {
    const written = { bytes: 0 };
    const port = await gigabyteTarget(written);
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ success: true, failureClass: "HTTP 200" });
    expect(written.bytes).toBeLessThan(64 * 1024 * 1024);
  });

  it("calls garbage an invalid response", async () => {
    const port = await netTarget((socket) => socket.end("\x00\x17garbage that is not HTTP\r\n\r\n"));
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ success: false, failureKind: "other", failureClass: "invalid HTTP response" });
  });

  it("calls an endless header stream an invalid response", async () => {
    const port = await netTarget((socket) => {
      socket.write("HTTP/1.1 200 OK\r\n");
      for (let i = 0; i < 2000; i++) socket.write(`X-Filler-${i}: ${"y".repeat(20)}\r\n`);
    });
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ failureKind: "other", failureClass: "invalid HTTP response: headers too large" });
  });

  it("names a reset connection", async () => {
    const port = await netTarget((socket) => socket.once("data", () => socket.resetAndDestroy()));
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ success: false, failureKind: "connect", failureClass: "connection reset by peer" });
  });

  it("names a connection closed before any response", async () => {
    const port = await netTarget((socket) => socket.once("data", () => socket.end()));
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ failureKind: "connect", failureClass: "connection closed before the response" });
  });

  it("names a refused connection", async () => {
    const server = createNetServer();
    const port = await listen(server);
    await close(server);
    const { outcome } = await timed(aRequest({ port }), aJudgement({ timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ success: false, failureKind: "connect", failureClass: "connect ECONNREFUSED" });
    expect(outcome.result).toMatch(/^connect ECONNREFUSED in \d+ ms$/);
  });
});
