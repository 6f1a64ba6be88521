// The operator-wide remaining-budget gauge says what the operator-wide ledger says, from the
// start (the chart's budget-exhausted alert reads it).
import { describe, expect, it } from "@jest/globals";
import { encodeOperatorLedger } from "../../operator/src/domain/ledger.js";
import { waitFor } from "../support/wait-for.js";
import { useBed } from "./support/test-bed.js";
import { type TestOperator } from "./support/operator.js";

const bed = useBed();

async function gauge(op: TestOperator): Promise<number | undefined> {
  return (await op.metrics.operatorReplacementBudgetRemaining.get()).values[0]?.value;
}

describe("the operator-wide remaining-budget gauge", () => {
  it.each([
    { name: "shows the whole budget at start when the ledger is empty", charged: 0, remaining: 10 },
    { name: "shows what is left at start when the ledger holds recent replacements", charged: 2, remaining: 8 },
  ])("$name", async ({ charged, remaining }) => {
    if (charged > 0) {
      const now = Date.now();
      const entries = Array.from({ length: charged }, (_, i) => ({
        pod: `web-${i}`,
        uid: `uid-${i}`,
        time: now - (i + 1) * 60_000,
        method: "Evict" as const,
        policy: "shop/web",
      }));
      await bed.cluster.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "healthprobe-operator-ledger", namespace: "healthprobe-system" },
        data: encodeOperatorLedger(entries),
      });
    }
    const op = await bed.startOperator();
    expect(
      await waitFor(async () => ((await gauge(op)) === remaining ? remaining : undefined), {
        what: `the gauge to read ${remaining}`,
      }),
    ).toBe(remaining);
  });
});
