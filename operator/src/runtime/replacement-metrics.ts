// The replacement families: replacements by outcome, and what the policy and operator budgets
// still allow.
import { Counter, Gauge, type Registry } from "prom-client";
import type { OperatorMetrics } from "./metrics.js";

export function replacementMetrics(
  registers: Registry[],
): Pick<OperatorMetrics, "replacementsTotal" | "replacementBudgetRemaining" | "operatorReplacementBudgetRemaining"> {
  const replacementsTotal = new Counter({
    name: "healthprobe_replacements_total",
    help: "Pod replacements attempted, by outcome.",
    labelNames: ["policy", "outcome"] as const,
    registers,
  });
  const replacementBudgetRemaining = new Gauge({
    name: "healthprobe_replacement_budget_remaining",
    help: "Replacements a policy may still make in its hourly or daily window.",
    labelNames: ["policy", "window"] as const,
    registers,
  });
  const operatorReplacementBudgetRemaining = new Gauge({
    name: "healthprobe_operator_replacement_budget_remaining",
    help: "Replacements the operator may still make in the current 12 h window.",
    registers,
  });
  operatorReplacementBudgetRemaining.set(0);
  return { replacementsTotal, replacementBudgetRemaining, operatorReplacementBudgetRemaining };
}
