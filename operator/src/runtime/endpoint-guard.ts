// The check in front of /metrics and /debug/targets: bearer token -> TokenReview -> SubjectAccessReview
// for `get` on the path, each decision cached briefly (and bounded) so that scrapes do not review
// every request. Concurrent requests with the same token share one review. An API server that
// cannot be asked is a 500, never a pass: the endpoints do not fail open.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import {
  DEFAULT_ACCESS_CACHE_TTLS,
  ExpiringCache,
  accessKey,
  authorised,
  bearerTokenOf,
  unauthenticated,
  verbOf,
  type AccessCacheTtls,
  type AccessReviewer,
  type AccessVerdict,
  type ReviewedUser,
  type TokenReviewResult,
} from "../domain/endpoint-access.js";
import type { Clock } from "./clock.js";

export interface EndpointGuard {
  /** The verdict for one request to a locked path; status 200 lets it through. */
  check(req: Pick<IncomingMessage, "headers" | "method">, path: string): Promise<AccessVerdict>;
}

export interface EndpointGuardOptions {
  reviewer: AccessReviewer;
  clock: Pick<Clock, "now">;
  ttls?: AccessCacheTtls;
  /** Decisions kept per cache (tokens, and user-path pairs). */
  maxEntries?: number;
  /** How long one review may take before the request is answered 500. */
  reviewTimeoutMs?: number;
  /** Told of a review that failed (the API server could not be asked); never given the token. */
  onError?: (err: unknown, what: "TokenReview" | "SubjectAccessReview") => void;
}

/** Lets every request through: --insecure-diagnostics, for local runs. */
export const OPEN_GUARD: EndpointGuard = { check: async () => ({ status: 200, message: "ok" }) };

export function createEndpointGuard(o: EndpointGuardOptions): EndpointGuard {
  const ttls = o.ttls ?? DEFAULT_ACCESS_CACHE_TTLS;
  const max = o.maxEntries ?? 1024;
  const tokens = new ExpiringCache<TokenReviewResult>(max);
  const access = new ExpiringCache<boolean>(max);
  const inFlight = new Map<string, Promise<unknown>>();
  const timeout = () => AbortSignal.timeout(o.reviewTimeoutMs ?? 10_000);

  // One review per key at a time; its result is cached by the caller.
  const shared = <T>(key: string, review: () => Promise<T>): Promise<T> => {
    const running = inFlight.get(key) as Promise<T> | undefined;
    if (running) return running;
    const p = review().finally(() => inFlight.delete(key));
    inFlight.set(key, p);
    return p;
  };

  async function authenticate(token: string): Promise<TokenReviewResult> {
    // The cache holds a digest, never the token itself.
    const key = `t:${createHash("sha256").update(token).digest("hex")}`;
    const cached = tokens.get(key, o.clock.now());
    if (cached) return cached;
    const result = await shared(key, () => o.reviewer.reviewToken(token, timeout()));
    tokens.set(key, result, o.clock.now() + (result.authenticated ? ttls.authenticatedMs : ttls.unauthenticatedMs));
    return result;
  }

  async function authorise(user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const key = `a:${accessKey(user, verb, path)}`;
    const cached = access.get(key, o.clock.now());
    if (cached !== undefined) return cached;
    const review = await shared(key, () => o.reviewer.reviewAccess(user, { path, verb }, timeout()));
    access.set(key, review.allowed, o.clock.now() + (review.allowed ? ttls.allowedMs : ttls.deniedMs));
    return review.allowed;
  }

  return {
    async check(req, path) {
      const token = bearerTokenOf(req.headers.authorization);
      if (token === undefined) return unauthenticated();
      let identity: TokenReviewResult;
      try {
        identity = await authenticate(token);
      } catch (err) {
        o.onError?.(err, "TokenReview");
        return { status: 500, message: "Authentication failed" };
      }
      if (!identity.authenticated) return unauthenticated();
      try {
        return authorised(identity.user, { allowed: await authorise(identity.user, verbOf(req.method), path) });
      } catch (err) {
        o.onError?.(err, "SubjectAccessReview");
        return { status: 500, message: `Authorization for user ${identity.user.username} failed` };
      }
    },
  };
}
