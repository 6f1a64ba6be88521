// The operator command: flags (and HEALTHPROBE_* environment) in, a running operator out.
// SIGTERM/SIGINT: stop writing, hand over the lease, exit 0.
import { startOperator } from "./operator.js";
import { loadConfigOrExit } from "./runtime/config.js";
import { applyHeapGrowth } from "./runtime/heap-growth.js";
import { createLogger } from "./runtime/logger.js";

const config = loadConfigOrExit();
applyHeapGrowth(config.heapGrowthPercent);
const logger = createLogger({ level: config.logLevel });

try {
  // Crash-safety tests only: die without any cleanup at a named point of a replacement.
  const failAt = process.env.HEALTHPROBE_TEST_FAILPOINT;
  const failpoint = failAt ? (point: string) => point === failAt && process.kill(process.pid, "SIGKILL") : undefined;
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
