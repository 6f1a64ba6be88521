// A fault-injecting reverse proxy in front of any Kubernetes API server (the API test server or a
// real kube-apiserver over https with a self-signed certificate). It serves plain HTTP on loopback
// (client-node then needs insecure-skip-tls-verify), forwards every request with its headers
// (the bearer token included), streams answers chunk by chunk with backpressure (watches are never
// buffered), and applies the faults its rules pick. Every request and what was done to it is logged.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest, Agent as HttpsAgent } from "node:https";
import { Agent as HttpAgent } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Transform, type TransformCallback } from "node:stream";
import { RuleSet, requestInfo, type Fault, type FaultRule, type RequestInfo, type RuleFilter } from "./rules.js";
import { handleControl } from "./control-api.js";

export type { Fault, FaultRule, RuleFilter } from "./rules.js";

export interface ProxyLogEntry {
  seq: number;
  /** Proxy's name (one proxy per client tells clients apart). */
  proxy: string;
  /** Wall-clock ms when the request arrived and when its answer ended (or was cut). */
  start: number;
  end?: number;
  method: string;
  path: string;
  verb: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  userAgent: string;
  /** The status the client saw (0: no answer, the socket was destroyed before one). */
  code: number;
  /** What the proxy did to it: e.g. "status 503", "latency 200", "drop-watch", "reset", "refused". */
  faults: string[];
  /** True when the request reached the upstream server (a write may have landed). */
  forwarded: boolean;
}

export interface FaultProxyOptions {
  /** http(s)://host:port of the API server. */
  upstream: string;
  /** Name written in the log; default "proxy". */
  name?: string;
  /** Seed of the probability draws; default 1. */
  seed?: number;
  /** Loopback port; default ephemeral. */
  port?: number;
  /** Keep at most this many log entries (oldest dropped first); default 100,000. */
  logLimit?: number;
}

const STATUS_REASONS: Record<number, string> = {
  409: "Conflict",
  410: "Expired",
  429: "TooManyRequests",
  500: "InternalError",
  502: "BadGateway",
  503: "ServiceUnavailable",
  504: "Timeout",
};

function statusBody(code: number, reason: string, message: string, details?: object): string {
  return JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  });
}

/** Counts newline-delimited watch events as they pass, and can stop forwarding them. */
class WatchStream extends Transform {
  events = 0;
  stalled = false;
  constructor(private readonly onEvent: (n: number) => void) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (this.stalled) return cb();
    // Forward event by event, so a fault "after N events" cuts exactly there.
    let from = 0;
    for (let i = chunk.indexOf(10); i !== -1 && !this.stalled; i = chunk.indexOf(10, from)) {
      this.push(chunk.subarray(from, i + 1));
      from = i + 1;
      this.events++;
      this.onEvent(this.events);
    }
    if (!this.stalled && from < chunk.length) this.push(chunk.subarray(from));
    cb();
  }
}

interface OpenWatch {
  stream: WatchStream;
  end(): void;
}

export class FaultProxy {
  readonly rules: RuleSet;
  readonly log: ProxyLogEntry[] = [];
  private readonly watches = new Set<OpenWatch>();
  private readonly sockets = new Set<Socket>();
  private seq = 0;
  private expireNext = false;
  private expireBefore = 0;
  private readonly agent: HttpAgent;
  private readonly upstream: URL;

  private constructor(
    private readonly server: Server,
    private readonly opts: FaultProxyOptions,
    readonly url: string,
  ) {
    this.upstream = new URL(opts.upstream);
    this.rules = new RuleSet(opts.seed ?? 1);
    this.agent =
      this.upstream.protocol === "https:"
        ? new HttpsAgent({ keepAlive: true, rejectUnauthorized: false })
        : new HttpAgent({ keepAlive: true });
  }

  static async start(opts: FaultProxyOptions): Promise<FaultProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
    });
    const proxy = new FaultProxy(server, opts, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", (req, res) => void proxy.handle(req, res));
    server.on("connection", (s: Socket) => {
      proxy.sockets.add(s);
      s.once("close", () => proxy.sockets.delete(s));
    });
    return proxy;
  }

  // --- The API test server's fault vocabulary ---------------------------------------------------

  addRule(rule: FaultRule): number {
    return this.rules.add(rule);
  }

  removeRule(id: number): void {
    this.rules.remove(id);
  }

  failNext(o: RuleFilter & { count: number; code?: number; reason?: string; retryAfterSeconds?: number }): number {
    const { count, code, reason, retryAfterSeconds, ...filter } = o;
    return this.addRule({ ...filter, count, fault: statusFault(code ?? 500, reason, retryAfterSeconds) });
  }

  failRate(
    o: RuleFilter & { rate: number; durationMs?: number; code?: number; reason?: string; retryAfterSeconds?: number },
  ): number {
    const { rate, durationMs, code, reason, retryAfterSeconds, ...filter } = o;
    return this.addRule({
      ...filter,
      probability: rate,
      ...(durationMs !== undefined ? { durationMs } : {}),
      fault: statusFault(code ?? 500, reason, retryAfterSeconds),
    });
  }

  addLatency(ms: number, filter: RuleFilter = {}): number {
    return this.addRule({ ...filter, fault: { kind: "latency", ms } });
  }

  /** Ends every open watch stream (clients see the stream close). */
  dropWatches(): void {
    for (const w of [...this.watches]) w.end();
  }

  /** Every open watch forwards nothing more but stays connected. */
  stallWatches(): void {
    for (const w of this.watches) w.stream.stalled = true;
  }

  expireNextWatch(): void {
    this.expireNext = true;
  }

  /** Watches and lists from a resourceVersion older than rv get 410 (etcd's revisions are numbers). */
  expireWatchesBefore(rv: string | number): void {
    this.expireBefore = Number(rv) || 0;
  }

  /** Refuse everything: each new request's socket is destroyed, and open connections are cut now. */
  partition(except?: Socket): number {
    const id = this.addRule({ fault: { kind: "reset" } });
    this.cutConnections(except);
    return id;
  }

  /** Destroys every client connection (open watches included) but `except` (a control request's). */
  cutConnections(except?: Socket): void {
    for (const s of this.sockets) if (s !== except) s.destroy();
  }

  clear(): void {
    this.rules.clear();
    this.expireNext = false;
    this.expireBefore = 0;
  }

  openWatches(): number {
    return this.watches.size;
  }

  async stop(): Promise<void> {
    this.cutConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }

  // --- Forwarding -------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url?.startsWith("/fault-proxy/")) return handleControl(this, req, res);
    const info = requestInfo(req.method ?? "GET", req.url ?? "/", req.headers);
    const entry: ProxyLogEntry = {
      seq: ++this.seq,
      proxy: this.opts.name ?? "proxy",
      start: Date.now(),
      method: info.method,
      path: info.path,
      verb: info.verb,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
      userAgent: info.userAgent,
      code: 0,
      faults: [],
      forwarded: false,
    };
    this.log.push(entry);
    if (this.log.length > (this.opts.logLimit ?? 100_000)) this.log.splice(0, 1000);
    const done = (): void => {
      entry.end ??= Date.now();
    };
    res.once("close", done);
    const faults = this.pickFaults(info);
    entry.faults = faults.map(describe);
    const latency = faults.find((f) => f.kind === "latency");
    if (latency) await new Promise((r) => setTimeout(r, latency.ms));
    const before = faults.find(
      (f) => f.kind === "status" || f.kind === "expire" || (f.kind === "reset" && f.afterBytes === undefined),
    );
    if (before) return this.answerLocally(req, res, info, before, entry);
    this.forward(req, res, info, faults, entry);
  }

  private pickFaults(info: RequestInfo): Fault[] {
    const faults = this.rules.pick(info);
    const fromRv = info.resourceVersion !== "" && info.resourceVersion !== "0" && (info.watch || info.verb === "list");
    if (fromRv && !faults.some((f) => f.kind === "expire")) {
      if (info.watch && this.expireNext) {
        this.expireNext = false;
        faults.push({ kind: "expire" });
      } else if (Number(info.resourceVersion) < this.expireBefore) faults.push({ kind: "expire" });
    }
    return faults;
  }

  private answerLocally(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    fault: Fault,
    entry: ProxyLogEntry,
  ): void {
    req.resume();
    if (fault.kind === "reset") {
      req.socket.destroy();
      return;
    }
    if (fault.kind === "expire") {
      const status = JSON.parse(statusBody(410, "Expired", `too old resource version: ${info.resourceVersion}`));
      entry.code = info.watch ? 200 : 410;
      if (info.watch) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "ERROR", object: status }) + "\n");
      } else {
        res.writeHead(410, { "content-type": "application/json" });
        res.end(JSON.stringify(status));
      }
      return;
    }
    if (fault.kind !== "status") return;
    const reason = fault.reason ?? STATUS_REASONS[fault.code] ?? "InternalError";
    const retry = fault.retryAfterSeconds ?? (fault.code === 429 ? 1 : undefined);
    const message =
      fault.code === 409
        ? "the object has been modified; please apply your changes to the latest version and try again"
        : `injected fault: ${reason}`;
    entry.code = fault.code;
    res.writeHead(fault.code, {
      "content-type": "application/json",
      ...(retry !== undefined ? { "retry-after": String(retry) } : {}),
    });
    res.end(statusBody(fault.code, reason, message, retry !== undefined ? { retryAfterSeconds: retry } : undefined));
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    faults: Fault[],
    entry: ProxyLogEntry,
  ): void {
    const headers = { ...req.headers, host: this.upstream.host };
    const send = this.upstream.protocol === "https:" ? httpsRequest : httpRequest;
    const up = send({
      protocol: this.upstream.protocol,
      hostname: this.upstream.hostname,
      port: this.upstream.port,
      method: req.method,
      path: req.url,
      headers,
      agent: this.agent,
    });
    entry.forwarded = true;
    up.on("error", () => {
      // Upstream refused or reset: the client sees its connection reset too, as it would without the proxy.
      if (!entry.code) entry.faults.push("upstream-error");
      res.destroy();
    });
    res.once("close", () => up.destroy());
    up.on("response", (ur) => {
      entry.code = ur.statusCode ?? 0;
      res.writeHead(ur.statusCode ?? 502, ur.statusMessage, ur.headers);
      // A watch's headers go out now, as upstream sent them, not with its first event.
      if (info.watch) res.flushHeaders();
      this.pipeBody(ur, res, info, faults, entry);
    });
    req.pipe(up);
  }

  private pipeBody(
    ur: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    faults: Fault[],
    entry: ProxyLogEntry,
  ): void {
    const cut = faults.find(
      (f): f is Extract<Fault, { kind: "reset" | "truncate" }> => f.kind === "reset" || f.kind === "truncate",
    );
    if (cut) return this.pipeCut(ur, res, cut, entry);
    if (!info.watch || ur.statusCode !== 200) {
      ur.pipe(res);
      return;
    }
    const drop = faults.find((f) => f.kind === "drop-watch");
    const stall = faults.find((f) => f.kind === "stall-watch");
    const watch: OpenWatch = {
      stream: new WatchStream((n) => {
        if (stall?.kind === "stall-watch" && n >= (stall.afterEvents ?? 0)) watch.stream.stalled = true;
        if (drop?.kind === "drop-watch" && n >= (drop.afterEvents ?? 0)) queueMicrotask(() => watch.end());
      }),
      end: () => {
        this.watches.delete(watch);
        ur.unpipe(watch.stream);
        ur.destroy();
        watch.stream.end();
      },
    };
    if (stall?.kind === "stall-watch" && !stall.afterEvents) watch.stream.stalled = true;
    this.watches.add(watch);
    res.once("close", () => this.watches.delete(watch));
    ur.pipe(watch.stream).pipe(res);
    if (drop?.kind === "drop-watch" && !drop.afterEvents) queueMicrotask(() => watch.end());
  }

  /** Forwards the first bytes of the body, then destroys the client's socket mid-body. */
  private pipeCut(
    ur: IncomingMessage,
    res: ServerResponse,
    cut: Extract<Fault, { kind: "reset" | "truncate" }>,
    entry: ProxyLogEntry,
  ): void {
    const length = Number(ur.headers["content-length"]);
    let budget = cut.afterBytes ?? (Number.isFinite(length) && length > 1 ? Math.floor(length / 2) : -1);
    const destroy = (): void => {
      entry.end = Date.now();
      ur.destroy();
      res.socket?.destroy();
    };
    ur.on("data", (chunk: Buffer) => {
      if (budget < 0) budget = Math.max(1, Math.floor(chunk.length / 2));
      const part = chunk.subarray(0, budget);
      budget -= part.length;
      if (part.length > 0) res.write(part);
      if (budget <= 0) {
        // Flush what was written, then cut: the client got headers and part of the body.
        res.socket?.write("", () => destroy());
        ur.pause();
      }
    });
    ur.on("end", () => res.end());
  }
}

function statusFault(code: number, reason?: string, retryAfterSeconds?: number): Fault {
  return {
    kind: "status",
    code,
    ...(reason ? { reason } : {}),
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  };
}

function describe(f: Fault): string {
  switch (f.kind) {
    case "status":
      return `status ${f.code}`;
    case "latency":
      return `latency ${f.ms}`;
    default:
      return f.kind;
  }
}

export function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  return FaultProxy.start(opts);
}
