// The parts of the spec that say how a policy behaves when many targets fail: what happens
// when none is Healthy (spec.drain.whenAllUnhealthy) and how a flapping pod is held out
// (spec.evaluation.flapQuarantine). Part of the one schema (policy-schema.ts).
import { z } from "zod";
import { DURATION_PATTERN, parseDuration } from "./duration.js";
import { cel, fail, type RuleName } from "./cross-field-rules.js";
import { desc, intIn, oneOf } from "./schema-helpers.js";

export const whenAllUnhealthySchema = oneOf(
  ["FailOpen", "FailClosed"],
  "What happens when no target is both Healthy and kubelet-Ready. FailOpen (default): nothing is drained, every kubelet-Ready pod stays in rotation. " +
    "FailClosed: every kubelet-Ready Unhealthy pod is drained, whatever maxUnhealthyPercent says, even if no endpoint is left ready; the only way the operator lets a Service go dark.",
).default("FailOpen");

/** A duration string between `minMs` and `maxMs`, checked by the CEL rule `rule`. */
function boundedDuration(rule: RuleName, minMs: number, maxMs: number, description: string) {
  return z
    .string()
    .max(64)
    .regex(new RegExp(DURATION_PATTERN), `must be a duration such as "30s", "10m" or "1h"`)
    .meta({ ...desc(description), ...cel(rule) })
    .superRefine((d, ctx) => {
      // An unparsable value is already reported by the pattern.
      if (!new RegExp(DURATION_PATTERN).test(d)) return;
      const ms = parseDuration(d);
      if (ms < minMs || ms > maxMs) fail(ctx, [], d, rule, d);
    });
}

export const flapQuarantineSchema = z
  .strictObject({
    flaps: intIn(2, 100)
      .default(3)
      .meta(
        desc(
          "Flaps inside `window` that quarantine a pod, 2-100 (default 3). A flap is a return to Unhealthy after a recovery: a transition Healthy -> Unhealthy of a pod that was Unhealthy before that Healthy spell.",
        ),
      ),
    window: boundedDuration(
      "flapWindowRange",
      10_000,
      86_400_000,
      `How far back flaps are counted: a duration from "10s" to "24h". Default 10m.`,
    ).default("10m"),
    maxBackoff: boundedDuration(
      "flapBackoffRange",
      1_000,
      86_400_000,
      `The longest quarantine: a duration from "1s" to "24h". The first quarantine lasts 1m (or maxBackoff if shorter) and doubles with each further flap inside the window, up to this. Default 10m.`,
    ).default("10m"),
  })
  .meta(
    desc(
      "Holds a pod that keeps flapping out of rotation for a back-off (off unless set; `{}` takes the defaults: 3 flaps in 10m, back-off up to 10m). A quarantined pod counts against maxUnhealthyPercent like a drained one, and is never the last Healthy pod taken out.",
    ),
  );

export type FlapQuarantineSpec = z.output<typeof flapQuarantineSchema>;
