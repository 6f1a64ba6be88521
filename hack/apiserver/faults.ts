// Fault injection: failed requests, latency, dropped and expired watches, to test clients' recovery.
import { ApiError } from "./errors.js";

export interface FaultFilter {
  verb?: string;
  resource?: string;
}

export interface FailNextOptions extends FaultFilter {
  count: number;
  code?: number;
  reason?: string;
}

export interface FailRateOptions extends FaultFilter {
  /** 0..1 probability that a matching request fails. */
  rate: number;
  durationMs?: number;
  code?: number;
  reason?: string;
}

export interface FaultInjector {
  failNext(opts: FailNextOptions): void;
  failRate(opts: FailRateOptions): void;
  addLatency(ms: number, filter?: FaultFilter): void;
  /** Closes every open watch stream (clients see the stream end). */
  dropWatches(): void;
  /** The next watch that starts from a resourceVersion (not "" or "0") gets a 410 Expired event. */
  expireNextWatch(): void;
  /** Watches and continue tokens from a resourceVersion older than rv get 410 Expired. */
  expireWatchesBefore(rv: string | number): void;
  clear(): void;
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Expired",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

function matches(f: FaultFilter, verb: string, resource: string): boolean {
  return (!f.verb || f.verb === verb) && (!f.resource || f.resource === resource);
}

export class Faults implements FaultInjector {
  private next: Array<FailNextOptions & { left: number }> = [];
  private rates: Array<FailRateOptions & { until: number }> = [];
  private latencies: Array<{ ms: number; filter: FaultFilter }> = [];
  expireNext = false;
  expireBefore = 0;

  constructor(
    private readonly onDropWatches: () => void,
    private readonly random: () => number = Math.random,
    /** Reads a resourceVersion the server issued (they are opaque to everyone else). */
    private readonly parseRv: (text: string) => number | undefined = (text) => Number(text),
  ) {}

  failNext(opts: FailNextOptions): void {
    this.next.push({ ...opts, left: opts.count });
  }

  failRate(opts: FailRateOptions): void {
    this.rates.push({
      ...opts,
      until: opts.durationMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.durationMs,
    });
  }

  addLatency(ms: number, filter: FaultFilter = {}): void {
    this.latencies.push({ ms, filter });
  }

  dropWatches(): void {
    this.onDropWatches();
  }

  expireNextWatch(): void {
    this.expireNext = true;
  }

  expireWatchesBefore(rv: string | number): void {
    this.expireBefore = typeof rv === "number" ? rv : (this.parseRv(rv) ?? 0);
  }

  clear(): void {
    this.next = [];
    this.rates = [];
    this.latencies = [];
    this.expireNext = false;
    this.expireBefore = 0;
  }

  latencyFor(verb: string, resource: string): number {
    return this.latencies.filter((l) => matches(l.filter, verb, resource)).reduce((a, l) => a + l.ms, 0);
  }

  /** The injected error for this request, if any. */
  failureFor(verb: string, resource: string): ApiError | undefined {
    const n = this.next.find((f) => f.left > 0 && matches(f, verb, resource));
    if (n) {
      n.left--;
      this.next = this.next.filter((f) => f.left > 0);
      return injected(n.code ?? 500, n.reason);
    }
    const now = Date.now();
    this.rates = this.rates.filter((r) => r.until > now);
    const r = this.rates.find((f) => matches(f, verb, resource));
    if (r && this.random() < r.rate) return injected(r.code ?? 500, r.reason);
    return undefined;
  }
}

function injected(code: number, reason?: string): ApiError {
  const why = reason ?? REASONS[code] ?? "InternalError";
  const message =
    code === 429
      ? "the server has received too many requests and has asked us to try again later"
      : code === 409
        ? "the object has been modified; please apply your changes to the latest version and try again"
        : `injected fault: ${why}`;
  return new ApiError(code, why, message, code === 429 ? { retryAfterSeconds: 1 } : {});
}
