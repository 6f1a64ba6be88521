// The operator's requests to the API server: plain JSON over one keep-alive connection pool.
// client-node builds a new undici Agent, and so a new (TLS) connection, for every request to a
// server with TLS settings, turns every body into its typed model and back, and its module graph
// alone costs about 80 MiB of resident memory; the operator reads and writes plain JSON anyway.
import { fetch, type Dispatcher, type Response } from "undici";

/** Where requests go and how they authenticate: built from a kubeconfig or the pod's service account. */
export interface KubeConnection {
  /** Base URL of the API server, without a trailing slash. */
  server: string;
  /** The keep-alive pool every request goes through. */
  dispatcher: Dispatcher;
  /** Authentication headers for one request (a token may rotate between requests). */
  headers(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** An HTTP error from the API server: `code` and `statusCode` are the HTTP status, `body` the metav1.Status as text. */
export class KubeApiError extends Error {
  readonly statusCode: number;
  constructor(
    message: string,
    readonly code: number,
    readonly body: string,
    readonly headers: Record<string, string>,
  ) {
    super(message);
    this.name = "KubeApiError";
    this.statusCode = code;
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Content type of the body, default application/json (patches name theirs). */
  contentType?: string;
  signal?: AbortSignal;
}

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR" | string;
  object: T;
}

export class KubeClient {
  constructor(readonly connection: KubeConnection) {}

  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.connection.server}${path}${qs ? `?${qs}` : ""}`;
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>("GET", path, query ? { query } : {});
  }

  post<T>(path: string, body: unknown, query?: Query): Promise<T> {
    return this.request<T>("POST", path, { body, ...(query ? { query } : {}) });
  }

  put<T>(path: string, body: unknown, query?: Query): Promise<T> {
    return this.request<T>("PUT", path, { body, ...(query ? { query } : {}) });
  }

  patch<T>(path: string, body: unknown, contentType: string): Promise<T> {
    return this.request<T>("PATCH", path, { body, contentType });
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>("DELETE", path, body === undefined ? {} : { body });
  }

  /** One request; resolves with the parsed JSON body, throws a KubeApiError on a status outside 2xx. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, opts);
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw apiError(method, path, res.status, text, headersOf(res));
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** One request whose answer is text (a pod log); throws a KubeApiError on a status outside 2xx. */
  async text(path: string, query: Query, signal?: AbortSignal): Promise<string> {
    const res = await this.send("GET", path, { query, ...(signal ? { signal } : {}) });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw apiError("GET", path, res.status, text, headersOf(res));
    return text;
  }

  /**
   * Watches a collection from a resourceVersion: yields each event as the server sends it and
   * returns when the server ends the watch. An HTTP error is thrown as a KubeApiError.
   */
  async *watch<T>(path: string, query: Query, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const res = await this.send("GET", path, { query: { ...query, watch: true }, signal });
    if (res.status !== 200) throw apiError("WATCH", path, res.status, await res.text(), headersOf(res));
    if (!res.body) return;
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of res.body) {
      rest += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl).trim();
        rest = rest.slice(nl + 1);
        if (line) yield JSON.parse(line) as WatchEvent<T>;
      }
    }
    if (rest.trim()) yield JSON.parse(rest) as WatchEvent<T>;
  }

  private async send(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { ...(await this.connection.headers()), accept: "application/json" };
    if (opts.body !== undefined) headers["content-type"] = opts.contentType ?? "application/json";
    return fetch(this.url(path, opts.query), {
      method,
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      dispatcher: this.connection.dispatcher,
    });
  }
}

function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => (out[k] = v));
  return out;
}

function apiError(
  method: string,
  path: string,
  status: number,
  text: string,
  headers: Record<string, string>,
): KubeApiError {
  let message: string;
  try {
    message = String((JSON.parse(text) as { message?: string }).message ?? "");
  } catch {
    message = text.slice(0, 200);
  }
  return new KubeApiError(`${method} ${path}: HTTP ${status}${message ? `: ${message}` : ""}`, status, text, headers);
}
