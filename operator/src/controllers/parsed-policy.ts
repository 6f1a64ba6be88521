// A policy object with its spec parsed: what every controller part takes.
import { parseDuration } from "../api/duration.js";
import { parsePolicySpec } from "../api/parse-policy.js";
import type { HealthProbePolicySpec } from "../api/policy-schema.js";
import { keyOf, type NamedPolicy, type ObjectCache, type PolicyObject } from "./kube-objects.js";

export interface ParsedPolicy {
  obj: NamedPolicy;
  key: string;
  spec: HealthProbePolicySpec;
  /** spec.replacement.after in milliseconds. */
  afterMs: number;
}

export type ParseResult = { ok: true; policy: ParsedPolicy } | { ok: false; message: string };

export function parsePolicy(obj: PolicyObject): ParseResult {
  const parsed = parsePolicySpec(obj.spec);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  return { ok: true, policy: { obj: obj as NamedPolicy, key: keyOf(obj), spec: parsed.spec, afterMs: parseDuration(parsed.spec.replacement.after) } };
}

/** The other live, valid policies in the policy's namespace. */
export function otherPolicies(policies: ObjectCache<PolicyObject>, policy: ParsedPolicy): ParsedPolicy[] {
  const out: ParsedPolicy[] = [];
  for (const obj of policies.list(policy.obj.metadata.namespace)) {
    if (obj.metadata?.name === policy.obj.metadata.name || obj.metadata?.deletionTimestamp) continue;
    const parsed = parsePolicy(obj);
    if (parsed.ok) out.push(parsed.policy);
  }
  return out;
}
