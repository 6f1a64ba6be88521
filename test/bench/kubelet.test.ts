// Smoke test of the kubelet benchmark with a handful of pods: the JSON line has its shape and
// every pod got one status write; the figures themselves are the benchmark's business.
import { describe, expect, it } from "@jest/globals";
import { parseKubeletFlags, runKubelet } from "./kubelet.js";

describe("kubelet benchmark", () => {
  it("starts a handful of pods by a ReplicaSet and bare, and reports each way", async () => {
    const result = await runKubelet({ pods: 5, modes: ["replicaset", "bare"] });
    expect(result).toMatchObject({ benchmark: "kubelet", pods: 5 });
    expect(result.replicaSet).toEqual({
      runningMs: expect.any(Number),
      statusWrites: 5,
      cpuMs: expect.any(Number),
      replicaSetReadyMs: expect.any(Number),
    });
    expect(result.bare).toEqual({ runningMs: expect.any(Number), statusWrites: 5, cpuMs: expect.any(Number) });
    expect(result.load.end).toHaveLength(3);
  }, 60_000);

  it.each([
    [["--pods", "0"], "--pods"],
    [["--pods", "ten"], "--pods"],
    [["--mode", "daemonset"], "--mode"],
    [["--replicas", "3"], "replicas"],
  ])("refuses %j naming the flag", (args, flag) => {
    expect(() => parseKubeletFlags(args)).toThrow(flag);
  });

  it("runs both ways by default, and one when asked", () => {
    expect(parseKubeletFlags([])).toEqual({ pods: 10_000, modes: ["replicaset", "bare"] });
    expect(parseKubeletFlags(["--pods", "100", "--mode", "bare"])).toEqual({ pods: 100, modes: ["bare"] });
  });
});
