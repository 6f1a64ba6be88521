// Whether the admission webhook adds the readiness gate to a pod being created, as a JSON patch.
//
// Rules:
// - Only a policy with `spec.drain.method: ReadinessGate` that is valid, not being deleted and
//   not in dryRun counts: the gate holds a pod out of Ready until the operator sets the
//   condition, so it is added only where a policy drains by it (the operator releases a gate no
//   policy holds, but the pod's readiness would still wait on the operator for nothing).
// - It must select the pod by its labels; an empty selector selects nothing here (the API
//   forbids one on a policy, and a gate on every pod of a namespace is never what was meant).
// - A pod that already carries the gate is left alone (never a duplicate gate).
// - The patch adds the gate and nothing else: `readinessGates` is created when absent, appended
//   to when present, so gates others added stay.
// The caller passes only the policies of the pod's namespace.
import { READINESS_GATE_CONDITION } from "../api/group.js";
import { matchesLabelSelector, type LabelSelector } from "./label-selector.js";

export { READINESS_GATE_CONDITION };

export interface GatePolicy {
  name: string;
  /** spec.drain.method as written; undefined means the default, EndpointSlice. */
  method: string | undefined;
  selector: LabelSelector | undefined;
  /** Its spec passed the operator's check. */
  valid: boolean;
  dryRun: boolean;
  deleting: boolean;
}

export interface GatePod {
  labels: Readonly<Record<string, string>> | undefined;
  /** spec.readinessGates as submitted; undefined when the field is absent. */
  readinessGates: ReadonlyArray<{ conditionType?: string }> | undefined;
}

export interface JsonPatchOperation {
  op: "add";
  path: string;
  value: unknown;
}

export type GateInjection =
  { inject: true; patch: JsonPatchOperation[]; reason: string } | { inject: false; reason: string };

function isEmptySelector(s: LabelSelector | undefined): boolean {
  return !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);
}

/** Why a ReadinessGate policy that selects the pod still does not count, or undefined when it does. */
function ineligible(p: GatePolicy): string | undefined {
  if (p.deleting) return "is being deleted";
  if (!p.valid) return "has an invalid spec";
  if (p.dryRun) return "is in dryRun";
  return undefined;
}

export function planGateInjection(policies: readonly GatePolicy[], pod: GatePod): GateInjection {
  if ((pod.readinessGates ?? []).some((g) => g.conditionType === READINESS_GATE_CONDITION)) {
    return { inject: false, reason: `the pod already carries the readiness gate ${READINESS_GATE_CONDITION}` };
  }
  const selecting = [...policies]
    .filter(
      (p) =>
        p.method === "ReadinessGate" && !isEmptySelector(p.selector) && matchesLabelSelector(p.selector!, pod.labels),
    )
    .sort((a, b) => a.name.localeCompare(b.name));
  const counting = selecting.filter((p) => ineligible(p) === undefined);
  if (counting.length === 0) {
    if (selecting.length === 0) {
      const gated = policies.filter((p) => p.method === "ReadinessGate").length;
      return {
        inject: false,
        reason: `no ReadinessGate policy selects the pod (${gated} of ${policies.length} policies in its namespace use ReadinessGate)`,
      };
    }
    const why = selecting.map((p) => `policy ${p.name} ${ineligible(p)}`).join("; ");
    return { inject: false, reason: `no gate added: ${why}` };
  }
  const gate = { conditionType: READINESS_GATE_CONDITION };
  const patch: JsonPatchOperation[] =
    pod.readinessGates === undefined
      ? [{ op: "add", path: "/spec/readinessGates", value: [gate] }]
      : [{ op: "add", path: "/spec/readinessGates/-", value: gate }];
  const names = counting.map((p) => p.name).join(", ");
  return {
    inject: true,
    patch,
    reason: `readiness gate ${READINESS_GATE_CONDITION} added: selected by ReadinessGate ${counting.length === 1 ? "policy" : "policies"} ${names}`,
  };
}
