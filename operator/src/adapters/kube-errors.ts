// Classifies API errors: the operator's KubeApiError and client-node's ApiException carry `code`
// and the raw response body (a JSON metav1.Status as text); watch failures carry `statusCode`.
// Wrapped errors are followed through their `cause` chain, so callers can classify the errors they
// rethrow with context.

export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    group?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

function* chain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  while (cur !== undefined && cur !== null && !seen.has(cur)) {
    seen.add(cur);
    yield cur;
    cur = (cur as { cause?: unknown }).cause;
  }
}

/** The HTTP status code of the first API error in the cause chain, or undefined for non-HTTP errors. */
export function statusCodeOf(err: unknown): number | undefined {
  for (const e of chain(err)) {
    const o = e as { code?: unknown; statusCode?: unknown };
    if (typeof o.statusCode === "number") return o.statusCode;
    // client-node's ApiException (tests and the test server's controllers use it): a code and a body.
    if (typeof o.code === "number" && o.code >= 100 && o.code < 600 && "body" in (e as object)) return o.code;
  }
  return undefined;
}

/** The metav1.Status the server sent with the error, when there is one. */
export function statusOf(err: unknown): KubeStatus | undefined {
  for (const e of chain(err)) {
    const body = (e as { body?: unknown }).body;
    if (body === undefined || body === null) continue;
    if (typeof body === "object") return body as KubeStatus;
    if (typeof body === "string") {
      try {
        const parsed = JSON.parse(body) as unknown;
        if (parsed && typeof parsed === "object") return parsed as KubeStatus;
      } catch {
        // not JSON: no status to report
      }
    }
  }
  return undefined;
}

export function reasonOf(err: unknown): string | undefined {
  return statusOf(err)?.reason;
}

export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
export const isGone = (err: unknown): boolean => statusCodeOf(err) === 410;
export const isTooManyRequests = (err: unknown): boolean => statusCodeOf(err) === 429;
// 409 covers both a stale resourceVersion (Conflict) and a create of an existing name (AlreadyExists).
export const isAlreadyExists = (err: unknown): boolean =>
  statusCodeOf(err) === 409 && reasonOf(err) === "AlreadyExists";
export const isConflict = (err: unknown): boolean => statusCodeOf(err) === 409 && reasonOf(err) !== "AlreadyExists";
export const isInvalid = (err: unknown): boolean => statusCodeOf(err) === 422;
export const isForbidden = (err: unknown): boolean => statusCodeOf(err) === 403;

/** Seconds the server asked us to wait (Status details or Retry-After), if it said. */
export function retryAfterSecondsOf(err: unknown): number | undefined {
  const fromStatus = statusOf(err)?.details?.retryAfterSeconds;
  if (typeof fromStatus === "number") return fromStatus;
  for (const e of chain(err)) {
    const headers = (e as { headers?: Record<string, string> }).headers;
    const raw = headers?.["retry-after"] ?? headers?.["Retry-After"];
    if (raw !== undefined && /^\d+$/.test(raw.trim())) return Number(raw.trim());
  }
  return undefined;
}

/** Errors worth retrying as they are: throttling, timeouts, server-side failures, transport errors. */
export function isRetryable(err: unknown): boolean {
  const code = statusCodeOf(err);
  if (code === undefined) return true;
  return code === 429 || code === 409 || code >= 500 || code === 408;
}
