// Names of the numbers a gRPC health check answers with: the call's grpc-status and the
// health service's ServingStatus (grpc/health/v1/health.proto).

/** grpc-status codes, by number (https://grpc.io/docs/guides/status-codes/). */
export const GRPC_STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;

/** HealthCheckResponse.ServingStatus, by number. */
export const SERVING_STATUS_NAMES = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"] as const;

export const SERVING = 1;

/** "UNIMPLEMENTED"; an unlisted code as "status 42". */
export function grpcStatusName(code: number): string {
  return GRPC_STATUS_NAMES[code] ?? `status ${code}`;
}

/**
 * The words for a health answer: "gRPC SERVING", "gRPC NOT_SERVING", "gRPC SERVICE_UNKNOWN".
 * The health status UNKNOWN is "gRPC health UNKNOWN", so that it is not read as the call's
 * grpc-status UNKNOWN ("gRPC UNKNOWN", a failed call).
 */
export function servingStatusText(status: number | undefined): string {
  const s = status ?? 0;
  if (s === 0) return "gRPC health UNKNOWN";
  const name = SERVING_STATUS_NAMES[s];
  return name ? `gRPC ${name}` : `gRPC health status ${s}`;
}
