// The access check of /metrics and /debug/targets as the operator wires it: the API server's
// TokenReview and SubjectAccessReview, or nobody checked with --insecure-diagnostics.
import { KubeAccessReviewer } from "./adapters/access-review.js";
import type { KubeClient } from "./adapters/kube-client.js";
import type { Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import { OPEN_GUARD, createEndpointGuard, type EndpointGuard } from "./runtime/endpoint-guard.js";
import type { Logger } from "./runtime/logger.js";

export function endpointGuardOf(
  config: Pick<OperatorConfig, "insecureDiagnostics">,
  client: KubeClient,
  logger: Logger,
  clock: Clock,
): EndpointGuard {
  if (config.insecureDiagnostics) {
    logger.warn({}, "--insecure-diagnostics: /metrics and /debug/targets answer anyone who reaches them");
    return OPEN_GUARD;
  }
  return createEndpointGuard({
    reviewer: new KubeAccessReviewer(client),
    clock,
    // The error only: a review's body never reaches the log.
    onError: (err, what) =>
      logger.warn({ err: String((err as Error)?.message ?? err), review: what }, "access review failed; answering 500"),
  });
}
