import { describe, it, expect } from "@jest/globals";
import { computeHealth, computeStartupGrace, initialHealth, type HealthRecord } from "./health.js";
import type { EvaluationSettings, ProbeOutcome } from "./types.js";
import { aFailure, aRecord, aSuccess, anEvaluation, SECOND, T0 } from "./testing/builders.js";

/** Feeds results one per second from T0 + 1s; returns the final record and every transition. */
function run(
  pattern: string,
  settings: EvaluationSettings,
  opts: { start?: HealthRecord; podStartedAt?: number } = {},
): { record: HealthRecord | undefined; transitions: string[] } {
  let record = opts.start;
  const transitions: string[] = [];
  [...pattern].forEach((c, i) => {
    const at = T0 + (i + 1) * SECOND;
    const result: ProbeOutcome = c === "s" ? aSuccess(at) : aFailure(at);
    const out = computeHealth(record, result, settings, opts.podStartedAt ?? T0 - 3600 * SECOND);
    if (out.transition) transitions.push(`${out.transition.from}->${out.transition.to}@${i + 1}`);
    record = out.record;
  });
  return { record, transitions };
}

describe("computeHealth with thresholds", () => {
  const cases: Array<{
    name: string;
    settings: Partial<EvaluationSettings>;
    pattern: string;
    state: string;
    transitions: string[];
  }> = [
    {
      name: "a new pod stays Unknown while results are below both thresholds",
      settings: { successThreshold: 2, failureThreshold: 3 },
      pattern: "sffs",
      state: "Unknown",
      transitions: [],
    },
    {
      name: "one success makes a new pod Healthy with successThreshold=1",
      settings: {},
      pattern: "s",
      state: "Healthy",
      transitions: ["Unknown->Healthy@1"],
    },
    {
      name: "failureThreshold consecutive failures make a new pod Unhealthy",
      settings: { failureThreshold: 3 },
      pattern: "fff",
      state: "Unhealthy",
      transitions: ["Unknown->Unhealthy@3"],
    },
    {
      name: "failures that are not consecutive never reach the threshold",
      settings: { failureThreshold: 3 },
      pattern: "sffsffsff",
      state: "Healthy",
      transitions: ["Unknown->Healthy@1"],
    },
    {
      name: "a Healthy pod becomes Unhealthy after failureThreshold failures",
      settings: { failureThreshold: 2 },
      pattern: "sff",
      state: "Unhealthy",
      transitions: ["Unknown->Healthy@1", "Healthy->Unhealthy@3"],
    },
    {
      name: "an Unhealthy pod needs successThreshold consecutive successes to recover",
      settings: { failureThreshold: 1, successThreshold: 3 },
      pattern: "fssfsss",
      state: "Healthy",
      transitions: ["Unknown->Unhealthy@1", "Unhealthy->Healthy@7"],
    },
    {
      name: "further failures of an Unhealthy pod change nothing",
      settings: { failureThreshold: 1 },
      pattern: "ffff",
      state: "Unhealthy",
      transitions: ["Unknown->Unhealthy@1"],
    },
  ];
  it.each(cases)("$name", ({ settings, pattern, state, transitions }) => {
    const out = run(pattern, anEvaluation(settings));
    expect(out.record?.state).toBe(state);
    expect(out.transitions).toEqual(transitions);
  });

  it("records since and unhealthySince at the transition into Unhealthy and keeps them while it stays", () => {
    const { record } = run("ffffff", anEvaluation({ failureThreshold: 2 }));
    expect(record).toMatchObject({
      state: "Unhealthy",
      since: T0 + 2 * SECOND,
      unhealthySince: T0 + 2 * SECOND,
      stateResult: "HTTP 503",
    });
  });

  it("clears unhealthySince on the return to Healthy", () => {
    const { record } = run("ffs", anEvaluation({ failureThreshold: 2 }));
    expect(record?.state).toBe("Healthy");
    expect(record?.unhealthySince).toBeUndefined();
    expect(record?.since).toBe(T0 + 3 * SECOND);
  });

  it("keeps the failure class of the state-setting result apart from the latest one", () => {
    let record = computeHealth(
      undefined,
      aFailure(T0 + 1, "HTTP 503"),
      anEvaluation({ failureThreshold: 1 }),
      T0 - 1e6,
    ).record;
    record = computeHealth(
      record,
      aFailure(T0 + 2, "timeout after 60s"),
      anEvaluation({ failureThreshold: 1 }),
      T0 - 1e6,
    ).record;
    expect(record.stateResult).toBe("HTTP 503");
    expect(record.lastResult).toBe("timeout after 60s");
    expect(record.lastProbeAt).toBe(T0 + 2);
  });

  it("gives the transition a reason naming the rule", () => {
    const out = computeHealth(
      aRecord({ consecutiveFailures: 2 }),
      aFailure(T0, "connect ECONNREFUSED"),
      anEvaluation({ failureThreshold: 3 }),
      T0 - 1e6,
    );
    expect(out.transition?.reason).toBe("3 consecutive failures (failureThreshold=3), last: connect ECONNREFUSED");
  });
});

describe("computeHealth with a window", () => {
  const window = (sampleSize: number, successfulSamplesRequired: number) =>
    anEvaluation({ failureThreshold: 1, successThreshold: 1, window: { sampleSize, successfulSamplesRequired } });
  const cases: Array<{ name: string; size: number; required: number; pattern: string; state: string }> = [
    {
      name: "stays Unknown before sampleSize results exist, whatever they are",
      size: 4,
      required: 2,
      pattern: "fff",
      state: "Unknown",
    },
    {
      name: "is Healthy once enough of the last sampleSize succeeded",
      size: 4,
      required: 2,
      pattern: "ffss",
      state: "Healthy",
    },
    {
      name: "is Unhealthy when too few of the last sampleSize succeeded",
      size: 4,
      required: 2,
      pattern: "fffs",
      state: "Unhealthy",
    },
    { name: "only counts the last sampleSize results", size: 4, required: 2, pattern: "ssssfff", state: "Unhealthy" },
    {
      name: "ignores the thresholds (one failure is not enough with failureThreshold=1)",
      size: 4,
      required: 2,
      pattern: "sssf",
      state: "Healthy",
    },
    {
      name: "recovers as soon as the window holds enough successes",
      size: 4,
      required: 2,
      pattern: "ffffss",
      state: "Healthy",
    },
  ];
  it.each(cases)("$name", ({ size, required, pattern, state }) => {
    expect(run(pattern, window(size, required)).record?.state).toBe(state);
  });

  it("keeps at most sampleSize samples", () => {
    const { record } = run("sfsfsfsfsfsf", window(4, 2));
    expect(record?.samples).toEqual([true, false, true, false]);
  });
});

describe("startup grace", () => {
  const grace = anEvaluation({ failureThreshold: 2, startupGraceSeconds: 10 });

  it("never makes a pod younger than startupGraceSeconds Unhealthy", () => {
    const out = run("fffff", grace, { podStartedAt: T0 });
    expect(out.record?.state).toBe("Unknown");
    expect(out.transitions).toEqual([]);
  });

  it("lets a young pod become Healthy", () => {
    expect(run("ffs", grace, { podStartedAt: T0 }).record?.state).toBe("Healthy");
  });

  it("keeps a young Healthy pod Healthy rather than taking it out of the cap's reach", () => {
    const out = run("sfff", grace, { podStartedAt: T0 });
    expect(out.record?.state).toBe("Healthy");
    expect(out.record?.consecutiveFailures).toBe(3);
  });

  it("decides on the first failure after the grace ends", () => {
    // Results at T0+1s..T0+12s; the grace ends at T0+10s.
    const out = run("ffffffffffff", grace, { podStartedAt: T0 });
    expect(out.transitions).toEqual(["Unknown->Unhealthy@10"]);
  });

  it("also holds in window mode", () => {
    const out = run(
      "ffffff",
      anEvaluation({ startupGraceSeconds: 60, window: { sampleSize: 2, successfulSamplesRequired: 1 } }),
      { podStartedAt: T0 },
    );
    expect(out.record?.state).toBe("Unknown");
  });

  it.each([
    { name: "inside the grace", at: T0 + 9 * SECOND, inGrace: true },
    { name: "at its end", at: T0 + 10 * SECOND, inGrace: false },
    { name: "with no grace configured", at: T0, inGrace: false, seconds: 0 },
  ])("computeStartupGrace reports $name", ({ at, inGrace, seconds }) => {
    expect(computeStartupGrace(T0, at, seconds ?? 10).inGrace).toBe(inGrace);
  });
});

describe("initialHealth", () => {
  it("starts a new pod Unknown with empty counters", () => {
    expect(initialHealth(undefined, T0)).toEqual({
      state: "Unknown",
      since: T0,
      consecutiveSuccesses: 0,
      consecutiveFailures: 0,
      samples: [],
    });
  });

  it("restores state, since, unhealthySince and the persisted failure class", () => {
    const r = initialHealth({ state: "Unhealthy", since: T0, unhealthySince: T0 - SECOND, lastResult: "HTTP 500" });
    expect(r).toMatchObject({
      state: "Unhealthy",
      since: T0,
      unhealthySince: T0 - SECOND,
      stateResult: "HTTP 500",
      consecutiveFailures: 0,
    });
  });

  it("drops unhealthySince from a seed that is not Unhealthy", () => {
    expect(initialHealth({ state: "Unknown", since: T0, unhealthySince: T0 }).unhealthySince).toBeUndefined();
  });

  it("does not flip a restored Healthy pod on the first failure", () => {
    const out = computeHealth(
      initialHealth({ state: "Healthy", since: T0 }),
      aFailure(T0 + SECOND),
      anEvaluation({ failureThreshold: 3 }),
      T0 - 1e6,
    );
    expect(out.transition).toBeUndefined();
    expect(out.record.state).toBe("Healthy");
  });

  it("keeps a restored Unhealthy pod's window through further failures", () => {
    const start = initialHealth({ state: "Unhealthy", since: T0, unhealthySince: T0 });
    const { record } = run("ff", anEvaluation({ failureThreshold: 3 }), { start });
    expect(record).toMatchObject({ state: "Unhealthy", unhealthySince: T0, since: T0 });
  });

  it("keeps a restored state in window mode until a full window exists", () => {
    const start = initialHealth({ state: "Unhealthy", since: T0, unhealthySince: T0 });
    const settings = anEvaluation({ window: { sampleSize: 4, successfulSamplesRequired: 2 } });
    expect(run("sss", settings, { start }).record?.state).toBe("Unhealthy");
    expect(run("ssss", settings, { start }).record?.state).toBe("Healthy");
  });
});
