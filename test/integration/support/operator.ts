// Runs the operator in-process against a test cluster, exactly as main.ts wires it, with its
// own kubeconfig user ("operator") so the test server's request log tells its calls apart.
import { Writable } from "node:stream";
import { startOperator, type RunningOperator, type StartOperatorOptions } from "../../../operator/src/operator.js";
import { parseConfig } from "../../../operator/src/runtime/config.js";
import { createLogger } from "../../../operator/src/runtime/logger.js";
import type { ClusterServer } from "./cluster.js";

export interface TestOperator extends RunningOperator {
  logs: Array<Record<string, unknown>>;
}

export async function startTestOperator(
  server: Pick<ClusterServer, "kubeconfig">,
  flags: string[] = [],
  opts: StartOperatorOptions & { user?: string } = {},
): Promise<TestOperator> {
  const parsed = parseConfig(
    [
      "--metrics-bind-address",
      "127.0.0.1:0",
      "--health-probe-bind-address",
      "127.0.0.1:0",
      "--operator-namespace",
      "healthprobe-system",
      ...flags,
    ],
    {},
  );
  if (!parsed.ok) throw new Error(parsed.message);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split("\n"))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const logger =
    opts.logger ??
    createLogger({ level: process.env.OPERATOR_LOG_LEVEL === "debug" ? "debug" : "info", destination: sink });
  const op = await startOperator(parsed.config, {
    ...opts,
    logger,
    kubeconfigYaml: server.kubeconfig(opts.user ?? "operator"),
  });
  return Object.assign(op, { logs });
}
