// A TCP probe: success = the connection is accepted within the timeout; it is then closed at
// once, without sending a byte, with a reset (socket-close.ts). Latency is the connect time.
import { connect as netConnect } from "node:net";
import { performance } from "node:perf_hooks";
import type { ProbeRequest, RawProbeResult } from "../domain/probe-request.js";
import type { ProbeExecutor } from "./http-prober.js";
import { classifySocketError } from "./socket-error.js";
import { closeProbeSocket } from "./socket-close.js";
import { errorResult, timeoutResult } from "./raw-results.js";

export function createTcpProber(opts: { now?: () => number } = {}): ProbeExecutor {
  const now = opts.now ?? Date.now;
  return (req: ProbeRequest, timeoutMs: number) =>
    new Promise<RawProbeResult>((resolve) => {
      const start = performance.now();
      let settled = false;
      const socket = netConnect({ host: req.address, port: req.port });
      const done = (result: RawProbeResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        closeProbeSocket(socket, false);
        resolve(result);
      };
      const timer = setTimeout(() => done(timeoutResult(timeoutMs, undefined, now())), timeoutMs);
      socket.once("connect", () => done({ kind: "connected", endAtMs: performance.now() - start, finishedAt: now() }));
      socket.on("error", (err: NodeJS.ErrnoException) => {
        const failure = classifySocketError(err, false, false, true, req.address);
        done(errorResult(failure.kind, failure.message, performance.now() - start, undefined, now()));
      });
    });
}
