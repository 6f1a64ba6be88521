// The operator's prober: each probe by its type, HTTP, TCP or gRPC.
import type { RawProbeResult } from "../domain/probe-request.js";
import { createGrpcProber } from "./grpc-prober.js";
import { createHttpProber, type HttpProberOptions, type ProbeExecutor } from "./http-prober.js";
import { createTcpProber } from "./tcp-prober.js";

export function createProber(opts: HttpProberOptions = {}): ProbeExecutor {
  const http = createHttpProber(opts);
  const tcp = createTcpProber(opts);
  const grpc = createGrpcProber(opts);
  return (req, timeoutMs, readBody): Promise<RawProbeResult> => {
    if (req.type === "TCP") return tcp(req, timeoutMs, readBody);
    if (req.type === "GRPC") return grpc(req, timeoutMs, readBody);
    return http(req, timeoutMs, readBody);
  };
}
