// Requests to the test server's own HTTP handler without a socket: the same handler a request over
// TCP reaches (routing, the request log, faults, admission webhooks, validation, storage, watch
// events), handed the request's method, path, headers and body as node's HTTP server would hand
// them over, its answer's status, headers and body taken as the client would read them. What it
// saves is the transport: no connection, no HTTP framing or parsing on either end.
import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface LoopbackAnswer {
  statusCode: number;
  headers: Record<string, string | number>;
  text: string;
}

/** Where an answer goes as the handler writes it. */
export interface AnswerSink {
  head(statusCode: number, headers: Record<string, string | number>): void;
  data(text: string): void;
  end(): void;
  /** The handler dropped the connection (or the client went away). */
  fail(err: Error): void;
}

/** The request as the handler reads it: method, url, headers (lower-case names) and the body's bytes as one chunk. */
export class LoopbackRequest extends EventEmitter {
  private sending = false;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    private readonly body: Buffer | undefined,
  ) {
    super();
    // The body flows once the handler waits for its end, as a paused stream's would.
    this.on("newListener", (event: string) => {
      if (event !== "end" || this.sending) return;
      this.sending = true;
      queueMicrotask(() => {
        if (this.body && this.body.length > 0) this.emit("data", this.body);
        this.emit("end");
      });
    });
  }
}

/**
 * The answer as the handler writes it: status and headers once (at the first write, or when
 * flushed), then the body as written. Like a socket's writes, the chunks written in one turn of the
 * event loop reach the client together.
 */
export class LoopbackResponse extends EventEmitter {
  statusCode = 200;
  /** As node's: true once writeHead has run. */
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  private headers: Record<string, string | number> = {};
  private pending: string[] = [];
  private flushing = false;
  private headSent = false;

  constructor(
    private readonly sink: AnswerSink,
    private readonly req: LoopbackRequest,
  ) {
    super();
  }

  writeHead(code: number, headers: Record<string, string | number> = {}): this {
    this.statusCode = code;
    this.headers = { ...this.headers, ...headers };
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    if (this.headSent || this.destroyed) return;
    this.headSent = this.headersSent = true;
    this.sink.head(this.statusCode, this.headers);
  }

  write(chunk: string | Buffer): boolean {
    if (this.writableEnded || this.destroyed) return false;
    this.flushHeaders();
    this.pending.push(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (this.writableEnded || this.destroyed) return this;
    this.flushHeaders();
    if (chunk !== undefined) this.pending.push(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    this.writableEnded = true;
    this.flush();
    this.sink.end();
    this.emit("finish");
    this.closed();
    return this;
  }

  /** As a reset connection: the client sees an error, not (the rest of) an answer. */
  destroy(err?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.sink.fail(err ?? new Error("socket hang up"));
    this.closed();
    return this;
  }

  /** The client went away (an aborted request): the handler sees the connection close. */
  abort(): void {
    if (this.destroyed || this.writableEnded) return;
    this.destroyed = true;
    this.closed();
  }

  private flush(): void {
    this.flushing = false;
    if (this.pending.length === 0 || this.destroyed) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join("");
    this.pending = [];
    this.sink.data(text);
  }

  private closed(): void {
    this.emit("close");
    this.req.emit("close");
  }
}

/** Starts one request on `handler`; the answer goes to `sink`. Returns the response, to abort it. */
export function startLoopback(
  handler: RequestHandler,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Buffer | undefined,
  sink: AnswerSink,
): LoopbackResponse {
  const req = new LoopbackRequest(method, path, headers, body);
  const res = new LoopbackResponse(sink, req);
  handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  return res;
}

/** Hands one request to `handler`; resolves to its whole answer, or rejects as a dropped connection would. */
export function loopbackRequest(
  handler: RequestHandler,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body?: string,
): Promise<LoopbackAnswer> {
  return new Promise((resolve, reject) => {
    let statusCode = 200;
    let answerHeaders: Record<string, string | number> = {};
    const chunks: string[] = [];
    startLoopback(handler, method, path, headers, body === undefined ? undefined : Buffer.from(body, "utf8"), {
      head: (code, h) => {
        statusCode = code;
        answerHeaders = h;
      },
      data: (text) => void chunks.push(text),
      end: () => resolve({ statusCode, headers: answerHeaders, text: chunks.join("") }),
      fail: (err) =>
        reject(Object.assign(new Error(`${method} ${path}: ${err.message}`, { cause: err }), { code: "ECONNRESET" })),
    });
  });
}
