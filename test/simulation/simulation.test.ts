// The whole-system simulation in the test suite: a few seeds of random history against the real
// operator, every invariant except the known-open ones. More seeds: SIM_SEEDS=N (and
// SIM_FIRST_SEED, SIM_STEPS); every seed replays alone with `npm run simulate -- --seed S --steps K`.
import { describe, expect, it } from "@jest/globals";
import { KNOWN_OPEN } from "./known-open.js";
import { replayCommand, runSeed } from "./runner.js";

const SEEDS = Number(process.env.SIM_SEEDS ?? 6);
const FIRST = Number(process.env.SIM_FIRST_SEED ?? 1);
const STEPS = Number(process.env.SIM_STEPS ?? 20);
/** A deadline per seed for a loaded machine, not a performance claim. */
const SEED_TIMEOUT_MS = 240_000;

describe("whole-system simulation", () => {
  it.each(Array.from({ length: SEEDS }, (_, i) => FIRST + i))(
    "seed %i keeps every invariant not known to be open",
    async (seed) => {
      const result = await runSeed({ seed, steps: STEPS, skip: new Set(KNOWN_OPEN.keys()) });
      const report = result.violations.map(
        (v) => `${v.invariant} at step ${v.step}: ${v.evidence} (replay: ${replayCommand(seed, STEPS)})`,
      );
      expect(report).toEqual([]);
      // Not a vacuous pass: the operator probed pods and wrote slices.
      expect(result.probes).toBeGreaterThan(0);
      expect(result.sliceWrites).toBeGreaterThan(0);
    },
    SEED_TIMEOUT_MS,
  );
});
