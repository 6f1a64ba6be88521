// Step Budget of the replacement chain: every selecting policy's own budget, the operator-wide
// cap and the namespace's share of it, each with the pod's own earlier charge left out.
import { computeBudget, computeNamespaceBudget, computeOperatorBudget, namespaceOfKey } from "./budget.js";
import { withoutPod } from "./ledger.js";
import { blocked, type Blocked } from "./replacement-checks.js";
import type { PolicyBudget, ShouldReplaceInput } from "./replacement.js";

/** Step 6: every selecting policy's budget and the operator-wide cap, with the pod's own earlier charge left out. */
export function checkBudgets(input: ShouldReplaceInput, policies: readonly PolicyBudget[]): Blocked | undefined {
  const { now, pod } = input;
  const reasons: string[] = [];
  const frees: Array<number | undefined> = [];
  for (const budget of policies) {
    if (budget.ledger === null) {
      reasons.push(`ledger of policy ${budget.policy} cannot be read`);
      frees.push(undefined);
      continue;
    }
    const result = computeBudget(withoutPod(budget.ledger, pod.uid), now, {
      maxPerHour: budget.maxPerHour,
      maxPerDay: budget.maxPerDay,
      policy: budget.policy,
    });
    if (!result.fits) {
      reasons.push(result.reason);
      frees.push(result.nextSlotAt);
    }
  }
  if (input.operatorLedger === null) {
    reasons.push("operator-wide ledger cannot be read");
    frees.push(undefined);
  } else {
    const ledger = withoutPod(input.operatorLedger, pod.uid);
    const result = computeOperatorBudget(ledger, now, input.max12h);
    if (!result.fits) {
      reasons.push(result.reason);
      frees.push(result.nextSlotAt);
    }
    const namespace = namespaceOfKey(input.policy.policy);
    if (input.maxPerNamespace12h !== undefined && namespace !== undefined) {
      const share = computeNamespaceBudget(ledger, now, { namespace, max12h: input.maxPerNamespace12h, operatorMax12h: input.max12h });
      if (!share.fits) {
        reasons.push(share.reason);
        frees.push(share.nextSlotAt);
      }
    }
  }
  if (reasons.length === 0) return undefined;
  const until = frees.some((t) => t === undefined) ? undefined : Math.max(...(frees as number[]));
  return blocked("Budget", reasons.join("; "), "Budget", until);
}

/** The budgets that apply to the pod: the deciding policy's, then every other selecting policy's, by name. */
export function selectingBudgets(input: ShouldReplaceInput): PolicyBudget[] {
  const byName = new Map(input.otherBudgets.map((b) => [b.policy, b]));
  const names = [...new Set(input.otherViews.map((v) => v.policy).filter((name) => name !== input.policy.policy))].sort();
  // A selecting policy whose ledger was not supplied is as good as unreadable.
  const others = names.map((name) => byName.get(name) ?? { policy: name, maxPerHour: 0, maxPerDay: 0, ledger: null });
  return [input.policy, ...others];
}
