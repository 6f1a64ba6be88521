// Who may read the operator's own HTTP endpoints, decided as controller-runtime's metrics filter
// (filters.WithAuthenticationAndAuthorization) decides: a bearer token, reviewed by the API
// server (TokenReview), then `get` on the non-resource URL path (SubjectAccessReview). The
// probes' endpoints stay open: kubelet calls them without a token.

/** Open: anyone (kubelet's liveness and readiness probes). Locked: an authenticated, authorised caller. */
export type EndpointAccess = "open" | "locked";

const OPEN_PATHS = new Set(["/healthz", "/readyz"]);
const LOCKED_PATHS = new Set(["/metrics", "/debug/targets"]);

/** What a path needs; undefined for a path the operator does not serve. */
export function accessOf(path: string): EndpointAccess | undefined {
  if (OPEN_PATHS.has(path)) return "open";
  if (LOCKED_PATHS.has(path)) return "locked";
  return undefined;
}

/** The token of `Authorization: Bearer <token>`; undefined without one (an empty token is none). */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
}

/** The user a TokenReview names, as a SubjectAccessReview must name it again. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type TokenReviewResult = { authenticated: true; user: ReviewedUser } | { authenticated: false; error?: string };

export interface AccessReviewResult {
  allowed: boolean;
  reason?: string;
}

/** The two reviews, made by the API server (adapters/access-review.ts); a failed call throws. */
export interface AccessReviewer {
  reviewToken(token: string, signal?: AbortSignal): Promise<TokenReviewResult>;
  reviewAccess(
    user: ReviewedUser,
    nonResource: { path: string; verb: string },
    signal?: AbortSignal,
  ): Promise<AccessReviewResult>;
}

/**
 * The SubjectAccessReview's verb for an HTTP method, lower-cased as kube-apiserver's request info
 * does; HEAD reads what GET reads, so it asks for `get` too.
 */
export function verbOf(method: string | undefined): string {
  const m = (method ?? "GET").toLowerCase();
  return m === "head" ? "get" : m;
}

/** The HTTP answer of one check: 200 lets the request through. */
export interface AccessVerdict {
  status: 200 | 401 | 403 | 500;
  message: string;
}

/** No token, or one the API server does not accept: 401, as controller-runtime answers. */
export function unauthenticated(): AccessVerdict {
  return { status: 401, message: "Unauthorized" };
}

/** A verdict from an access review: 403 names the user, never the token. */
export function authorised(user: ReviewedUser, review: AccessReviewResult): AccessVerdict {
  return review.allowed
    ? { status: 200, message: "ok" }
    : { status: 403, message: `Authorization denied for user ${user.username}` };
}

/** How long a decision is kept: a scrape every 15 s reviews at most once a minute, a revoked role is seen within a minute. */
export interface AccessCacheTtls {
  authenticatedMs: number;
  /** A token the API server refused: short, so a freshly minted token is not held back long. */
  unauthenticatedMs: number;
  allowedMs: number;
  deniedMs: number;
}

export const DEFAULT_ACCESS_CACHE_TTLS: AccessCacheTtls = {
  authenticatedMs: 60_000,
  unauthenticatedMs: 10_000,
  allowedMs: 60_000,
  deniedMs: 10_000,
};

/** The cache key of one authorisation: a user and what they asked for. */
export function accessKey(user: ReviewedUser, verb: string, path: string): string {
  return JSON.stringify([user.username, user.uid ?? "", [...(user.groups ?? [])].sort(), verb, path]);
}

/**
 * A cache of decisions that expire, holding at most `maxEntries`: a flood of distinct tokens
 * evicts the oldest instead of growing without bound. Times are injected, never read.
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly maxEntries: number) {}

  get(key: string, now: number): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt });
    // A Map iterates in insertion order: the first key is the oldest written.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}
