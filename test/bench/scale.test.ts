// Smoke test of the scale benchmark with tiny numbers: the JSON line has its shape and the
// slices converge. The operator runs from its sources (tsx) so the test needs no build; the
// figures themselves are the benchmark's business, never asserted here.
import { describe, expect, it } from "@jest/globals";
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
      result.restart.firstRoundMs,
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
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  }, 120_000);

  it.each([
    [["--pods", "0"], "--pods"],
    [["--period", "ten"], "--period"],
    [["--policies", "20", "--pods", "10"], "--policies"],
    [["--cluster", "kind"], "--cluster"],
  ])("refuses %j naming the flag", (args, flag) => {
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
});
