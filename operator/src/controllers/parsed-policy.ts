// A policy object with its spec parsed: what every controller part takes.
import { parseDuration } from "../api/duration.js";
import { parsePolicySpec } from "../api/parse-policy.js";
import type { HealthProbePolicySpec } from "../api/policy-schema.js";
import type { FlapQuarantineSettings } from "../domain/flap-quarantine.js";
import { keyOf, type NamedPolicy, type ObjectCache, type PolicyObject } from "./kube-objects.js";

export interface ParsedPolicy {
  obj: NamedPolicy;
  key: string;
  spec: HealthProbePolicySpec;
  /** spec.replacement.after in milliseconds. */
  afterMs: number;
  /** spec.evaluation.flapQuarantine in milliseconds; absent when off. */
  flapQuarantine?: FlapQuarantineSettings;
}

export type ParseResult = { ok: true; policy: ParsedPolicy } | { ok: false; message: string };

// Parsed once per cached object: a cache replaces the object on every change, so its identity
// stands for its content, and the many readers (every reconcile looks at its namespace's other
// policies) share one parse instead of running the schema again.
const parsedByObject = new WeakMap<PolicyObject, ParseResult>();

export function parsePolicy(obj: PolicyObject): ParseResult {
  let result = parsedByObject.get(obj);
  if (result === undefined) {
    result = parseUncached(obj);
    parsedByObject.set(obj, result);
  }
  return result;
}

function parseUncached(obj: PolicyObject): ParseResult {
  const parsed = parsePolicySpec(obj.spec);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const policy: ParsedPolicy = {
    obj: obj as NamedPolicy,
    key: keyOf(obj),
    spec: parsed.spec,
    afterMs: parseDuration(parsed.spec.replacement.after),
  };
  const fq = parsed.spec.evaluation.flapQuarantine;
  if (fq)
    policy.flapQuarantine = {
      flaps: fq.flaps,
      windowMs: parseDuration(fq.window),
      maxBackoffMs: parseDuration(fq.maxBackoff),
    };
  return { ok: true, policy };
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
