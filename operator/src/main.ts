// The operator command: flags (and HEALTHPROBE_* environment) in, a running operator out.
// SIGTERM/SIGINT: stop writing, hand over the lease, exit 0. HEALTHPROBE_TEST_FAILPOINT(_ACTION):
// crash-safety tests only, see atFailpoint.
import { writeSync } from "node:fs";
import { startOperator } from "./operator.js";
import { loadConfigOrExit } from "./runtime/config.js";
import { applyHeapGrowth } from "./runtime/heap-growth.js";
import { createLogger } from "./runtime/logger.js";

/**
 * Crash-safety tests only (HEALTHPROBE_TEST_FAILPOINT names a point of a replacement): die there
 * without any cleanup, or with HEALTHPROBE_TEST_FAILPOINT_ACTION=stop say so in one line on stderr
 * and freeze for good, sending nothing more, until the test kills the pod. Frozen by blocking the
 * only thread that runs JavaScript: in a container the operator is PID 1, which a signal it sends
 * itself (SIGSTOP as well as SIGKILL) does not reach.
 */
function atFailpoint(point: string): void {
  if (process.env.HEALTHPROBE_TEST_FAILPOINT_ACTION !== "stop") {
    process.kill(process.pid, "SIGKILL");
    return;
  }
  writeSync(2, `healthprobe test failpoint ${point} reached: stopped\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

const config = loadConfigOrExit();
applyHeapGrowth(config.heapGrowthPercent);
const logger = createLogger({ level: config.logLevel });

try {
  const failAt = process.env.HEALTHPROBE_TEST_FAILPOINT;
  const failpoint = failAt ? (point: string) => point === failAt && atFailpoint(point) : undefined;
  const operator = await startOperator(config, { logger, ...(failpoint ? { failpoint } : {}) });
  logger.info(
    {
      identity: operator.identity,
      namespaces: config.namespaces.length > 0 ? config.namespaces.join(",") : "(all)",
      leaderElect: config.leaderElect,
      shards: config.shards.enabled,
      healthPort: operator.healthPort,
      metricsPort: operator.metricsPort,
    },
    "operator started",
  );
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    operator.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
} catch (err) {
  logger.error({ err }, "operator failed to start");
  process.exit(1);
}
