// A request to the test server's own HTTP handler without a socket: the same handler a request over
// TCP reaches (routing, the request log, faults, admission webhooks, validation, storage, watch
// events), handed the request's method, path, headers and body as node's HTTP server would hand
// them over, its answer's status and body taken as the client would read them. What it saves is
// the transport: no connection, no HTTP framing or parsing on either end. For plain requests with
// a whole answer (not watches, not logs that stream).
import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface LoopbackAnswer {
  statusCode: number;
  headers: Record<string, string | number>;
  text: string;
}

/** The request as the handler reads it: method, url, headers (lower-case names) and the body's bytes as one chunk. */
class LoopbackRequest extends EventEmitter {
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

/** The answer as the handler writes it: a status line with headers, then the whole body at once. */
class LoopbackResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  private headers: Record<string, string | number> = {};
  private readonly chunks: string[] = [];

  constructor(private readonly done: (err: Error | undefined, answer?: LoopbackAnswer) => void) {
    super();
  }

  writeHead(code: number, headers: Record<string, string | number> = {}): this {
    this.statusCode = code;
    this.headers = { ...this.headers, ...headers };
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  write(chunk: string | Buffer): boolean {
    this.chunks.push(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (this.writableEnded) return this;
    if (chunk !== undefined) this.write(chunk);
    this.headersSent = true;
    this.writableEnded = true;
    this.done(undefined, { statusCode: this.statusCode, headers: this.headers, text: this.chunks.join("") });
    this.emit("finish");
    this.emit("close");
    return this;
  }

  /** As a reset connection: the client sees an error, not an answer. */
  destroy(err?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.done(err ?? new Error("socket hang up"));
    this.emit("close");
    return this;
  }
}

/** Hands one request to `handler`; resolves to its answer, or rejects as a dropped connection would. */
export function loopbackRequest(handler: RequestHandler, method: string, path: string, headers: IncomingHttpHeaders, body?: string): Promise<LoopbackAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const res = new LoopbackResponse((err, answer) => {
      if (settled) return;
      settled = true;
      if (err) reject(Object.assign(new Error(`${method} ${path}: ${err.message}`, { cause: err }), { code: "ECONNRESET" }));
      else resolve(answer!);
    });
    const req = new LoopbackRequest(method, path, headers, body === undefined ? undefined : Buffer.from(body, "utf8"));
    handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  });
}
