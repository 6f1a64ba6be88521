// The operator's KubeClient, in process to the test server's own request handler: its requests
// go through the loopback dispatcher (loopback-dispatcher.ts), and a watch reads the lines the
// handler writes as they are written, without fetch's streams and a decoder between: each watch
// event of the test server is one write of one line. The same requests, the same events, the
// same errors as over HTTP (an answer other than 200 is a KubeApiError; an abort ends the watch
// with an AbortError and closes the server's side).
import {
  KubeApiError,
  KubeClient,
  type KubeConnection,
  type Query,
  type WatchEvent,
} from "../../operator/src/adapters/kube-client.js";
import { startLoopback, type LoopbackResponse, type RequestHandler } from "./loopback.js";

/** What a watch has received and not yet handed out. */
interface Received {
  chunks: string[];
  ended: boolean;
  failure?: Error;
  status: number;
  headers: Record<string, string>;
  wake?: () => void;
}

export class LoopbackKubeClient extends KubeClient {
  constructor(
    connection: KubeConnection,
    private readonly handler: RequestHandler,
  ) {
    super(connection);
  }

  override async *watch<T>(path: string, query: Query, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const url = new URL(this.url(path, { ...query, watch: true }));
    const headers: Record<string, string> = { host: url.host, accept: "application/json" };
    for (const [k, v] of Object.entries(await this.connection.headers())) headers[k.toLowerCase()] = v;
    signal.throwIfAborted();
    const got: Received = { chunks: [], ended: false, status: 0, headers: {} };
    const res = this.start(url.pathname + url.search, headers, got);
    const onAbort = (): void => {
      got.failure ??= new DOMException("This operation was aborted", "AbortError");
      res.abort();
      got.wake?.();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      yield* this.events<T>(path, got);
    } finally {
      signal.removeEventListener("abort", onAbort);
      res.abort();
    }
  }

  private start(path: string, headers: Record<string, string>, got: Received): LoopbackResponse {
    const wake = (): void => got.wake?.();
    return startLoopback(this.handler, "GET", path, headers, undefined, {
      head: (code, answerHeaders) => {
        got.status = code;
        for (const [k, v] of Object.entries(answerHeaders)) got.headers[k.toLowerCase()] = String(v);
      },
      data: (text) => {
        got.chunks.push(text);
        wake();
      },
      end: () => {
        got.ended = true;
        wake();
      },
      fail: (err) => {
        got.failure ??= err;
        wake();
      },
    });
  }

  private async *events<T>(path: string, got: Received): AsyncGenerator<WatchEvent<T>> {
    let rest = "";
    for (;;) {
      // Events as they come; an error's whole answer.
      while (!got.failure && !got.ended && (got.status !== 200 || got.chunks.length === 0))
        await new Promise<void>((resolve) => (got.wake = resolve));
      got.wake = undefined;
      if (got.failure) throw got.failure;
      if (got.status !== 200) throw watchError(path, got);
      const text = got.chunks.length === 1 ? got.chunks[0]! : got.chunks.join("");
      got.chunks = [];
      const lines = (rest + text).split("\n");
      rest = lines.pop()!;
      for (const line of lines) if (line.trim()) yield JSON.parse(line) as WatchEvent<T>;
      if (got.ended && got.chunks.length === 0) break;
    }
    if (rest.trim()) yield JSON.parse(rest) as WatchEvent<T>;
  }
}

/** As KubeClient's: the Status's message, or the start of the body. */
function watchError(path: string, got: Received): KubeApiError {
  const text = got.chunks.join("");
  let message: string;
  try {
    message = String((JSON.parse(text) as { message?: string }).message ?? "");
  } catch {
    message = text.slice(0, 200);
  }
  return new KubeApiError(
    `WATCH ${path}: HTTP ${got.status}${message ? `: ${message}` : ""}`,
    got.status,
    text,
    got.headers,
  );
}
