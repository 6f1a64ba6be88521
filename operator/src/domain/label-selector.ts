// metav1.LabelSelector matching, as apimachinery's LabelSelectorAsSelector does it.

export interface LabelSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | string;
  values?: readonly string[];
}

export interface LabelSelector {
  matchLabels?: Readonly<Record<string, string>>;
  matchExpressions?: readonly LabelSelectorRequirement[];
}

/**
 * Whether labels satisfy the selector. An empty selector matches everything (the API
 * forbids one on a policy, so the operator never relies on that); an unknown operator
 * matches nothing, so a malformed selector can never widen a policy's reach.
 */
export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (have[k] !== v) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(have, req.key);
    const value = have[req.key];
    switch (req.operator) {
      case "In":
        if (!present || !(req.values ?? []).includes(value as string)) return false;
        break;
      case "NotIn":
        if (present && (req.values ?? []).includes(value as string)) return false;
        break;
      case "Exists":
        if (!present) return false;
        break;
      case "DoesNotExist":
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
