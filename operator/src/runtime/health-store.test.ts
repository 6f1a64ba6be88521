import { describe, it, expect } from "@jest/globals";
import { HealthStore, type HealthTarget } from "./health-store.js";
import type { ProbeOutcome } from "../domain/probe-request.js";
import { anEvaluation, SECOND, T0 } from "../domain/testing/builders.js";

const POLICY = "ns/web";
const pod: HealthTarget = { uid: "uid-a", name: "a", ip: "10.0.0.1", startedAt: T0 - 3600 * SECOND };

function outcome(at: number, success = false): ProbeOutcome {
  const failureClass = success ? "HTTP 200" : "HTTP 503";
  const fields = { latencyMs: 1, result: `${failureClass} in 1 ms`, failureClass, finishedAt: at };
  return success ? { success, ...fields } : { success, failureKind: "http_status", ...fields };
}

function aStore(seeds = new Map()): HealthStore {
  const store = new HealthStore();
  store.configure(POLICY, anEvaluation({ failureThreshold: 3 }), [pod], seeds, T0);
  return store;
}

describe("HealthStore evidence", () => {
  it("starts probing when a pod is first configured, with no result yet", () => {
    expect(aStore().evidence(POLICY, "uid-a")).toEqual({ probingSince: T0 });
  });

  it("does not count a seed from status as a result", () => {
    const store = aStore(new Map([["uid-a", { state: "Unhealthy" as const, since: T0 - 7200 * SECOND }]]));
    expect(store.get(POLICY, "uid-a")?.state).toBe("Unhealthy");
    expect(store.evidence(POLICY, "uid-a")).toEqual({ probingSince: T0 });
  });

  it("keeps the time of the latest result", () => {
    const store = aStore();
    store.record(POLICY, "uid-a", outcome(T0 + SECOND));
    store.record(POLICY, "uid-a", outcome(T0 + 2 * SECOND));
    expect(store.evidence(POLICY, "uid-a")).toEqual({ probingSince: T0, lastResultAt: T0 + 2 * SECOND });
  });

  it("restarts probing for every pod of a policy, leaving others alone", () => {
    const store = aStore();
    store.configure("ns/other", anEvaluation(), [pod], new Map(), T0);
    store.record(POLICY, "uid-a", outcome(T0 + SECOND));
    store.restartProbing(POLICY, T0 + 10 * SECOND);
    expect(store.evidence(POLICY, "uid-a")).toEqual({ probingSince: T0 + 10 * SECOND, lastResultAt: T0 + SECOND });
    expect(store.evidence("ns/other", "uid-a")).toEqual({ probingSince: T0 });
  });

  it("keeps when probing started across later configures", () => {
    const store = aStore();
    store.configure(POLICY, anEvaluation(), [pod], new Map(), T0 + 60 * SECOND);
    expect(store.evidence(POLICY, "uid-a")?.probingSince).toBe(T0);
  });
});

describe("HealthStore.record asks for a reconcile", () => {
  // The drain path: the result that crosses failureThreshold wakes the policy itself, so the
  // slice write follows that result, not the next one or a resync.
  it.each([1, 2, 3])(
    "on the failing result that crosses failureThreshold %i, and on none of the failures before it",
    (failureThreshold) => {
      const store = new HealthStore();
      store.configure(POLICY, anEvaluation({ failureThreshold, successThreshold: 1 }), [pod], new Map(), T0);
      expect(store.record(POLICY, "uid-a", outcome(T0 + SECOND, true))).toBe(true);
      const wakes = Array.from({ length: failureThreshold + 1 }, (_, i) =>
        store.record(POLICY, "uid-a", outcome(T0 + (i + 2) * SECOND)),
      );
      expect(wakes).toEqual(Array.from({ length: failureThreshold + 1 }, (_, i) => i === failureThreshold - 1));
      expect(store.get(POLICY, "uid-a")?.state).toBe("Unhealthy");
    },
  );

  it("on the first fresh result even when the state does not change, then not again", () => {
    const store = aStore(
      new Map([["uid-a", { state: "Unhealthy" as const, since: T0 - 7200 * SECOND, lastResult: "HTTP 503" }]]),
    );
    expect(store.record(POLICY, "uid-a", outcome(T0 + SECOND))).toBe(true);
    expect(store.record(POLICY, "uid-a", outcome(T0 + 2 * SECOND))).toBe(false);
  });

  it("not on a Healthy pod's first fresh result that changes nothing: after a restart, every pod's first result would wake its policy", () => {
    const store = aStore(
      new Map([["uid-a", { state: "Healthy" as const, since: T0 - 7200 * SECOND, lastResult: "HTTP 200" }]]),
    );
    expect(store.record(POLICY, "uid-a", outcome(T0 + SECOND, true))).toBe(false);
  });

  it("on the first result after probing restarts", () => {
    const store = aStore();
    store.record(POLICY, "uid-a", outcome(T0 + SECOND));
    store.record(POLICY, "uid-a", outcome(T0 + 2 * SECOND));
    store.restartProbing(POLICY, T0 + 3 * SECOND);
    expect(store.record(POLICY, "uid-a", outcome(T0 + 4 * SECOND))).toBe(true);
    expect(store.record(POLICY, "uid-a", outcome(T0 + 5 * SECOND))).toBe(false);
  });

  it("on the next result of a pod it was asked to wake on, once", () => {
    const store = aStore();
    store.record(POLICY, "uid-a", outcome(T0 + SECOND, true));
    store.wakeOnNextResult(POLICY, ["uid-a", "uid-gone"]);
    expect(store.record(POLICY, "uid-a", outcome(T0 + 2 * SECOND, true))).toBe(true);
    expect(store.record(POLICY, "uid-a", outcome(T0 + 3 * SECOND, true))).toBe(false);
  });
});

describe("HealthStore flap history", () => {
  it("keeps each transition into Healthy or Unhealthy, not the results that change nothing", () => {
    const store = aStore();
    const results = [false, false, false, true, true, false, false, false, true];
    results.forEach((ok, i) => store.record(POLICY, "uid-a", outcome(T0 + (i + 1) * SECOND, ok)));
    expect(store.flapHistory(POLICY, "uid-a")).toEqual({
      transitions: [
        { at: T0 + 3 * SECOND, to: "Unhealthy" },
        { at: T0 + 4 * SECOND, to: "Healthy" },
        { at: T0 + 8 * SECOND, to: "Unhealthy" },
        { at: T0 + 9 * SECOND, to: "Healthy" },
      ],
    });
  });

  it("restores a quarantine from its seed, with no transitions", () => {
    const store = aStore(
      new Map([["uid-a", { state: "Healthy" as const, since: T0 - 60 * SECOND, quarantinedUntil: T0 + 60 * SECOND }]]),
    );
    expect(store.flapHistory(POLICY, "uid-a")).toEqual({ transitions: [], restoredUntil: T0 + 60 * SECOND });
  });

  it("knows nothing of a pod it does not probe", () => {
    expect(aStore().flapHistory(POLICY, "uid-b")).toBeUndefined();
  });
});
