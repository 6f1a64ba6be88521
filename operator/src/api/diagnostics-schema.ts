// The replacement fields that keep a pod's diagnostics before it is evicted.
import { z } from "zod";
import { DURATION_PATTERN, parseDuration } from "./duration.js";
import { cel, fail } from "./cross-field-rules.js";
import { desc } from "./schema-helpers.js";

export const keepDiagnosticsSchema = z
  .boolean()
  .default(true)
  .meta(
    desc(
      "Just before evicting, stores the pod's last log lines, Events, conditions and probe results in a ConfigMap in the policy's namespace (a failure to capture never delays the replacement by more than 5 s).",
    ),
  );

export const diagnosticsRetentionSchema = z
  .string()
  .max(64)
  .regex(new RegExp(DURATION_PATTERN), `must be a duration such as "24h", "90m" or "1h30m"`)
  .default("24h")
  .meta({
    ...desc(
      `How long diagnostics ConfigMaps are kept: a duration from "1m" to "720h". At most 20 are kept per policy, the oldest deleted first.`,
    ),
    ...cel("diagnosticsRetentionRange"),
  })
  .superRefine(
    (a, ctx) =>
      void (
        new RegExp(DURATION_PATTERN).test(a) &&
        (parseDuration(a) < 60_000 || parseDuration(a) > 720 * 3_600_000) &&
        fail(ctx, [], a, "diagnosticsRetentionRange", a)
      ),
  );
