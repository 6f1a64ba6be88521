// An undici dispatcher whose requests go to the test server's own request handler in process
// (loopback.ts): fetch over it, and so the operator's KubeClient, lists and watches as over a
// socket. A watch's events arrive as the server writes them, the chunks of one turn of the event
// loop together; aborting the request closes the server's side as a closed connection does.
import { Dispatcher } from "undici";
import { startLoopback, type LoopbackResponse, type RequestHandler } from "./loopback.js";

/** The handler interface fetch and undici's request API hand to a dispatcher. */
interface ResponseHandler {
  onConnect?(abort: (err?: Error) => void): void;
  onHeaders?(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData?(chunk: Buffer): boolean;
  onComplete?(trailers: Buffer[] | null): void;
  onError?(err: Error): void;
}

const STATUS_TEXT: Record<number, string> = { 200: "OK", 201: "Created" };

function headersOf(given: Dispatcher.DispatchOptions["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!given) return out;
  if (Array.isArray(given)) {
    for (let i = 0; i + 1 < given.length; i += 2) out[String(given[i]).toLowerCase()] = String(given[i + 1]);
    return out;
  }
  const entries =
    Symbol.iterator in (given as object)
      ? [...(given as Iterable<[string, string | string[] | undefined]>)]
      : Object.entries(given);
  for (const [k, v] of entries) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
  return out;
}

function bodyOf(body: Dispatcher.DispatchOptions["body"]): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new Error("loopback dispatcher: only string and byte bodies are supported");
}

export class LoopbackDispatcher extends Dispatcher {
  /** Aborts each request still open, as closing its connection would. */
  private readonly open = new Set<(err: Error) => void>();
  private closed = false;

  constructor(
    private readonly handler: RequestHandler,
    /** The Host header, as a client over TCP sends it. */
    private readonly host: string,
  ) {
    super();
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const h = handler as unknown as ResponseHandler;
    if (this.closed) {
      queueMicrotask(() => h.onError?.(new Error("loopback dispatcher: closed")));
      return false;
    }
    const headers: Record<string, string> = { host: this.host, ...headersOf(opts.headers) };
    const body = bodyOf(opts.body);
    if (body) headers["content-length"] = String(body.length);
    // As a connection does, the request starts on a later tick than the call.
    queueMicrotask(() => this.start(opts.method, opts.path, headers, body, h));
    return true;
  }

  private start(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    h: ResponseHandler,
  ): void {
    // `res` is set once the handler has the request; an abort may come before (from onConnect) or after.
    const at: { res?: LoopbackResponse; done: boolean } = { done: false };
    const finish = (): boolean => {
      if (at.done) return false;
      at.done = true;
      this.open.delete(abort);
      return true;
    };
    const abort = (err?: Error): void => {
      if (!finish()) return;
      at.res?.abort();
      h.onError?.(err ?? new Error("aborted"));
    };
    h.onConnect?.(abort);
    if (at.done) return;
    at.res = startLoopback(this.handler, method, path, headers, body, {
      head: (code, answerHeaders) => {
        const raw: Buffer[] = [];
        for (const [k, v] of Object.entries(answerHeaders))
          raw.push(Buffer.from(k.toLowerCase()), Buffer.from(String(v)));
        h.onHeaders?.(code, raw, () => {}, STATUS_TEXT[code] ?? "");
      },
      data: (text) => {
        if (!at.done) h.onData?.(Buffer.from(text, "utf8"));
      },
      end: () => {
        if (finish()) h.onComplete?.([]);
      },
      fail: (err) => {
        if (finish()) h.onError?.(err);
      },
    });
    if (!at.done) this.open.add(abort);
  }

  override async close(): Promise<void> {
    this.closed = true;
    for (const abort of [...this.open]) abort(new Error("loopback dispatcher: closed"));
  }

  override async destroy(): Promise<void> {
    await this.close();
  }
}
