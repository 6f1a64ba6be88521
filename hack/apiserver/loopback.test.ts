import { describe, it, expect, beforeEach, afterEach } from "@jest/globals";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { Cluster } from "./cluster.js";
import { Faults } from "./faults.js";
import { createHandler } from "./http-server.js";
import { loopbackRequest, type RequestHandler } from "./loopback.js";
import { PodLogs } from "./pod-logs.js";
import type { RequestLogEntry } from "./request-log.js";
import { NUMERIC_RESOURCE_VERSIONS, Store } from "./store.js";

// One handler served two ways: over a socket and in process. Each test makes the same requests
// both ways on two identical servers and compares what the clients and the servers saw.
interface Served {
  handler: RequestHandler;
  watches: Set<unknown>;
  log: RequestLogEntry[];
  faults: Faults;
  server: Server;
  origin: string;
}

async function serve(): Promise<Served> {
  const store = new Store(100, NUMERIC_RESOURCE_VERSIONS, true);
  const cluster = new Cluster(store);
  const log: RequestLogEntry[] = [];
  const faults = new Faults(() => {});
  const watches = new Set<ServerResponse>();
  const handler = createHandler({
    cluster,
    faults,
    log,
    serverAddress: () => "127.0.0.1",
    bookmarkIntervalMs: 1000,
    requestLogLimit: Number.POSITIVE_INFINITY,
    watches,
    podLogs: new PodLogs(cluster),
  });
  const ctx = { user: "system:apiserver", dryRun: false, fieldValidation: "Ignore" as const, warnings: [] };
  cluster.create(cluster.registry.find("", "v1", "namespaces")!, undefined, { metadata: { name: "default" } }, ctx);
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    handler,
    watches,
    log,
    faults,
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  };
}

type Call = { method: string; path: string; body?: unknown };
type Answer = { statusCode: number; body: unknown };

const HEADERS = {
  authorization: "Bearer controller-manager",
  accept: "application/json",
  "content-type": "application/json",
};

async function overHttp(s: Served, agent: Agent, call: Call): Promise<Answer> {
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  const res = await agent.request({
    origin: s.origin,
    path: call.path,
    method: call.method as "PUT",
    headers: HEADERS,
    ...(body === undefined ? {} : { body }),
  });
  return { statusCode: res.statusCode, body: JSON.parse(await res.body.text()) };
}

async function inProcess(s: Served, call: Call): Promise<Answer> {
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  const res = await loopbackRequest(s.handler, call.method, call.path, { host: "127.0.0.1", ...HEADERS }, body);
  return { statusCode: res.statusCode, body: JSON.parse(res.text) };
}

/** Times and uids differ between two servers; everything else must not. */
const comparable = (v: unknown): unknown =>
  JSON.parse(
    JSON.stringify(v)
      .replace(/"(time|creationTimestamp)":"[^"]*"/g, '"$1":"T"')
      .replace(/"uid":"[^"]*"/g, '"uid":"U"'),
  );

const aPod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web-1", labels: { app: "web" } },
  spec: { containers: [{ name: "app", image: "web:1" }] },
};
const statusOf = (rv: string): Call => ({
  method: "PUT",
  path: "/api/v1/namespaces/default/pods/web-1/status",
  body: {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web-1", namespace: "default", resourceVersion: rv },
    status: { phase: "Running", podIP: "127.0.10.1" },
  },
});

let http: Served;
let local: Served;
let agent: Agent;
beforeEach(async () => {
  [http, local] = await Promise.all([serve(), serve()]);
  agent = new Agent({ connections: 1 });
});
afterEach(async () => {
  await agent.close();
  for (const s of [http, local]) {
    s.server.closeAllConnections();
    await new Promise<void>((resolve) => s.server.close(() => resolve()));
  }
});

async function both(call: Call): Promise<[Answer, Answer]> {
  return [await overHttp(http, agent, call), await inProcess(local, call)];
}

describe("requests in process", () => {
  it("get the answers and leave the request log a request over HTTP gets and leaves", async () => {
    const create: Call = { method: "POST", path: "/api/v1/namespaces/default/pods", body: aPod };
    const [createdA, created] = await both(create);
    expect(created.statusCode).toBe(201);
    expect(comparable(created)).toEqual(comparable(createdA));
    const rv = (created.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    // An existing name, a stale resourceVersion, then the write the kubelet makes.
    for (const call of [create, statusOf(`${rv}0`), statusOf(rv)]) {
      const [a, b] = await both(call);
      expect(comparable(b)).toEqual(comparable(a));
    }
    expect(local.log.map((e) => e.code)).toEqual([201, 409, 409, 200]);
    expect(comparable(local.log)).toEqual(comparable(http.log));
  });

  it("meet the faults injected for the same requests", async () => {
    await both({ method: "POST", path: "/api/v1/namespaces/default/pods", body: aPod });
    for (const s of [http, local]) s.faults.failNext({ verb: "update", resource: "pods", count: 1, code: 503 });
    const [a, b] = await both(statusOf("2"));
    expect(b.statusCode).toBe(503);
    expect(b).toEqual(a);
  });

  it("fail, as a dropped connection does, when the handler gives up on the answer", async () => {
    const dropping: RequestHandler = (_req, res) => void res.destroy();
    await expect(loopbackRequest(dropping, "GET", "/api/v1/pods", {})).rejects.toThrow(
      "GET /api/v1/pods: socket hang up",
    );
  });
});
