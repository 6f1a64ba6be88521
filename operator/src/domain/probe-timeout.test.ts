import { describe, it, expect } from "@jest/globals";
import { effectiveProbeTimeout, type EffectiveTimeout } from "./probe-timeout.js";

describe("effectiveProbeTimeout", () => {
  it.each<[string, number, number, EffectiveTimeout]>([
    ["keeps a timeout under the cap", 5_000, 60_000, { timeoutMs: 5_000 }],
    ["keeps a timeout equal to the cap", 60_000, 60_000, { timeoutMs: 60_000 }],
    [
      "caps a timeout above the cap and says why",
      600_000,
      60_000,
      {
        timeoutMs: 60_000,
        cappedReason: "spec.probe.timeoutSeconds 600 capped to 60: the operator's --max-probe-timeout is 60s",
      },
    ],
    ["keeps any timeout without a cap", 3_600_000, 0, { timeoutMs: 3_600_000 }],
  ])("%s", (_name, requested, cap, expected) => {
    expect(effectiveProbeTimeout(requested, cap)).toEqual(expected);
  });
});
