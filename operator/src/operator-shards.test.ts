import { describe, expect, it } from "@jest/globals";
import { createShards } from "./operator-shards.js";
import { parseConfig } from "./runtime/config.js";
import { createMetrics } from "./runtime/metrics.js";
import { FakeClock } from "./runtime/testing/fake-clock.js";
import { quietLogger } from "./controllers/testing/quiet-logger.js";

function configOf(argv: string[]) {
  const parsed = parseConfig(argv, {});
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.config;
}

const deps = () => ({
  client: {} as never,
  identity: "a_1",
  clock: new FakeClock(),
  logger: quietLogger(),
  metrics: createMetrics({ processMetrics: false }),
});

describe("the operator's shards", () => {
  it("with --shards=off hands every part back unwrapped and owns nothing, so the operator is exactly as without shards", async () => {
    const shards = createShards(configOf([]), deps());
    const parts = { writer: {}, sink: {}, diagnostics: {}, targets: {}, reconcile: async () => undefined };
    expect(shards.writer(parts.writer as never)).toBe(parts.writer);
    expect(shards.eventSink(parts.sink as never)).toBe(parts.sink);
    expect(shards.diagnostics(parts.diagnostics as never)).toBe(parts.diagnostics);
    expect(shards.targets(parts.targets as never)).toBe(parts.targets);
    expect(shards.reconcile(parts.reconcile)).toBe(parts.reconcile);
    expect(shards.owned()).toBeUndefined();
    await shards.stop();
  });

  it("with --shards=on wraps the parts and owns nothing before its first round", async () => {
    const d = deps();
    const shards = createShards(configOf(["--shards=on"]), d);
    const writer = {} as never;
    expect(shards.writer(writer)).not.toBe(writer);
    expect(shards.owned()).toEqual([]);
    expect(await d.metrics.registry.getSingleMetricAsString("healthprobe_shard_namespaces_owned")).toContain(
      'healthprobe_shard_namespaces_owned{replica="a_1"} 0',
    );
  });
});
