// Smoke test of the scale benchmark with tiny numbers: the JSON line has its shape and the
// slices converge. The operator runs from its sources (tsx) so the test needs no build; the
// figures themselves are the benchmark's business, never asserted here.
import { describe, expect, it } from "@jest/globals";
import { FlagError } from "./flags.js";
import { parseScaleFlags } from "./scale.js";
import { runScale } from "./scale/run-scale.js";

describe("scale benchmark", () => {
  it("prints every figure and sees the slices converge with a handful of pods", async () => {
    const result = await runScale({
      pods: 6,
      policies: 2,
      periodSeconds: 1,
      quietSeconds: 1,
      operatorEntry: ["--import", "tsx", "operator/src/main.ts"],
    });
    expect(result.slicesCorrect).toBe(true);
    expect(result).toMatchObject({
      benchmark: "scale",
      cluster: "testserver",
      pods: 6,
      policies: 2,
      periodSeconds: 1,
      scheduledProbesPerSecond: 6,
    });
    expect(result.unhealthy.pods).toBe(2);
    for (const n of [
      result.coldStartMs,
      result.coldFirstRoundMs,
      result.statusSettledMs,
      result.rssMB.steady,
      result.rssMB.peak,
      result.cpuPerProbeUs,
      result.probesPerSecond,
      result.scheduleLagP99Ms,
      result.unhealthy.convergeMs,
      result.restart!.firstRoundMs,
    ]) {
      expect(Number.isFinite(n)).toBe(true);
    }
    expect(result.quiet).toEqual({
      seconds: expect.any(Number),
      writes: expect.any(Number),
      byResource: expect.any(Object),
      statusChanges: expect.any(Object),
      probeFailures: expect.any(Object),
    });
    expect(result.restart).toEqual({
      shutdownMs: expect.any(Number),
      shutdownKilled: expect.any(Boolean),
      firstRoundMs: expect.any(Number),
      writes: expect.any(Number),
      byResource: expect.any(Object),
      windowSeconds: 4,
    });
    expect(result).not.toHaveProperty("shards");
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  }, 120_000);

  it("with two replicas over two namespaces: each replica's share, and a SIGKILLed one's namespaces taken over", async () => {
    const result = await runScale({
      pods: 8,
      policies: 4,
      periodSeconds: 1,
      quietSeconds: 2,
      replicas: 2,
      namespaces: 2,
      shardLeaseDurationMs: 3_000,
      operatorEntry: ["--import", "tsx", "operator/src/main.ts"],
    });
    expect(result.slicesCorrect).toBe(true);
    expect(result).toMatchObject({ replicas: 2, namespaces: 2 });
    expect(result).not.toHaveProperty("restart");
    const shards = result.shards!;
    expect(shards.timings).toEqual({
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 400,
      skewMarginMs: 400,
    });
    expect(shards.perReplica).toHaveLength(2);
    expect(shards.perReplica.reduce((n, r) => n + r.namespacesOwned, 0)).toBe(2);
    expect(shards.perReplica.reduce((n, r) => n + r.targetsOwned, 0)).toBe(8);
    expect(shards.rebalance.namespaces).toBeGreaterThan(0);
    expect(shards.rebalance.rebalanceMs).toBeGreaterThanOrEqual(shards.rebalance.ownedMs);
    expect(shards.rebalance.boundMs).toBe(3800);
    expect(result.quiet.leaseWrites).toEqual(expect.any(Number));
  }, 180_000);

  it.each([
    [["--pods", "0"], "--pods"],
    [["--period", "ten"], "--period"],
    [["--policies", "20", "--pods", "10"], "--policies"],
    [["--cluster", "kind"], "--cluster"],
    [["--replicas", "0"], "--replicas"],
    [["--replicas", "two"], "--replicas"],
    [["--namespaces", "0"], "--namespaces"],
    [["--quick", "--namespaces", "11"], "--namespaces"],
    [["--replicas", "2", "--cluster", "real"], "--replicas"],
    [["--namespaces", "2", "--cluster", "real"], "--namespaces"],
    [["--shard-lease-duration", "5s"], "--shard-lease-duration"],
    [["--replicas", "2", "--shard-lease-duration", "5"], "--shard-lease-duration"],
    [["--replicas", "2", "--shard-lease-duration", "500ms"], "--shard-lease-duration"],
    [["--replicas"], "--replicas"],
  ])("refuses %j naming the flag", (args, flag) => {
    expect(() => parseScaleFlags(args)).toThrow(FlagError);
    expect(() => parseScaleFlags(args)).toThrow(flag);
  });

  it.each([
    [[], "testserver"],
    [["--cluster", "testserver"], "testserver"],
    [["--cluster", "real", "--quick"], "real"],
  ])("%j runs on the %s cluster", (args, cluster) => {
    expect(parseScaleFlags(args)).toMatchObject({ cluster });
  });

  it("--quick changes the defaults and explicit flags still win", () => {
    expect(parseScaleFlags(["--quick", "--period", "5"])).toMatchObject({
      pods: 1000,
      policies: 10,
      periodSeconds: 5,
      quietSeconds: 20,
      build: true,
    });
    expect(parseScaleFlags([])).toMatchObject({ pods: 10_000, policies: 100, periodSeconds: 10, quietSeconds: 60 });
  });

  it("--replicas 1 (the default) runs one namespace; more replicas spread over 100 namespaces, or one per policy", () => {
    expect(parseScaleFlags([])).toMatchObject({ replicas: 1, namespaces: 1 });
    expect(parseScaleFlags([])).not.toHaveProperty("shardLeaseDurationMs");
    expect(parseScaleFlags(["--replicas", "2"])).toMatchObject({ replicas: 2, namespaces: 100 });
    expect(parseScaleFlags(["--replicas", "3", "--quick"])).toMatchObject({ replicas: 3, namespaces: 10 });
    expect(parseScaleFlags(["--namespaces", "10"])).toMatchObject({ replicas: 1, namespaces: 10 });
    expect(parseScaleFlags(["--replicas", "2", "--shard-lease-duration", "6s"])).toMatchObject({
      shardLeaseDurationMs: 6000,
    });
    expect(parseScaleFlags(["--replicas", "2", "--shard-lease-duration", "1500ms"])).toMatchObject({
      shardLeaseDurationMs: 1500,
    });
  });
});
