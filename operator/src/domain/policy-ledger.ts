// A policy's replacement ledger in a ConfigMap of its own, in the policy's namespace: its name, its
// labels and owner, and which entries count, from the ConfigMap (when there is one) or else from
// status.replacements (what an earlier version kept there, or the mirror of a ledger since deleted).
//
// Never fewer charges: a ConfigMap this policy owns is the ledger; one left by a deleted policy of
// the same name is carried over (its entries and the status's); with none, status.replacements is
// the baseline, persisted with the first charge (or at once when it holds entries). A ConfigMap of
// that name that is not a policy ledger is a user's: it is never written, and nothing is replaced
// for the policy until it is moved away. A ledger that cannot be decoded is an error, never empty.
import { cut, shortHash } from "./diagnostics.js";
import { chargeLedger, decodeLedgerData, decodePolicyLedger, encodeOperatorLedger } from "./ledger.js";
import type { LedgerEntry } from "./budget.js";

/** The label that marks a policy's ledger ConfigMap (one label-selected cache holds them all). */
export const LABEL_LEDGER = "healthprobe.io/ledger";
export const LEDGER_OF_POLICY = "policy";
export const POLICY_LEDGER_SELECTOR = `${LABEL_LEDGER}=${LEDGER_OF_POLICY}`;

const SUFFIX = "-healthprobe-ledger";
const MAX_NAME = 253;

/** `<policy>-healthprobe-ledger`; a name too long for that keeps a prefix and a hash of the whole. */
export function policyLedgerName(policy: string): string {
  if (policy.length + SUFFIX.length <= MAX_NAME) return `${policy}${SUFFIX}`;
  return `${cut(policy, MAX_NAME - SUFFIX.length - 9)}-${shortHash(policy)}${SUFFIX}`;
}

export interface LedgerOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** What is read of a ConfigMap where a policy's ledger lives. */
export interface LedgerConfigMapView {
  name: string;
  labels?: Readonly<Record<string, string>> | undefined;
  ownerReferences?: ReadonlyArray<{ kind?: string | undefined; name?: string | undefined; uid?: string | undefined }>;
  data?: Readonly<Record<string, string>> | undefined;
}

/** Whose the ConfigMap is: this policy's, a deleted policy's of the same name, or someone else's. */
export type LedgerHome = { home: "own" } | { home: "inherited" } | { home: "foreign"; why: string };

export function ledgerHomeOf(cm: LedgerConfigMapView, owner: LedgerOwner): LedgerHome {
  const refs = cm.ownerReferences ?? [];
  if (refs.some((r) => r.kind === owner.kind && r.uid === owner.uid)) return { home: "own" };
  if (cm.labels?.[LABEL_LEDGER] !== LEDGER_OF_POLICY)
    return { home: "foreign", why: `it is not labelled ${POLICY_LEDGER_SELECTOR}` };
  const stranger = refs.find((r) => r.kind !== owner.kind || r.name !== owner.name);
  if (stranger)
    return { home: "foreign", why: `it belongs to ${stranger.kind ?? "an object"} ${stranger.name ?? ""}`.trimEnd() };
  return { home: "inherited" };
}

/** A policy's ledger as read: the entries that count, and whether they still need persisting in a ConfigMap it owns. */
export type PolicyLedgerRead =
  { ok: true; entries: LedgerEntry[]; pending: boolean } | { ok: false; error: string; foreign: boolean };

/**
 * The entries that count for a policy: the ConfigMap's when the policy owns it; with none, the
 * baseline in status.replacements; a deleted namesake's ConfigMap, carried over with the baseline.
 * `pending`: they are not (all) in a ConfigMap the policy owns yet.
 */
export function readPolicyLedger(
  cm: LedgerConfigMapView | undefined,
  owner: LedgerOwner,
  statusReplacements: unknown,
): PolicyLedgerRead {
  const what = (name: string) => `ConfigMap ${name}`;
  if (cm) {
    const home = ledgerHomeOf(cm, owner);
    if (home.home === "foreign")
      return {
        ok: false,
        foreign: true,
        error: `ConfigMap ${cm.name} is not this policy's replacement ledger (${home.why}); it is left alone, move it away`,
      };
    const stored = decodeLedgerData(cm.data, what(cm.name));
    if (!stored.ok) return { ok: false, foreign: false, error: stored.error };
    if (home.home === "own") return { ok: true, entries: stored.entries, pending: false };
    const baseline = decodePolicyLedger(statusReplacements);
    if (!baseline.ok) return { ok: false, foreign: false, error: baseline.error };
    return { ok: true, entries: mergeLedgers(stored.entries, baseline.entries), pending: true };
  }
  const baseline = decodePolicyLedger(statusReplacements);
  if (!baseline.ok) return { ok: false, foreign: false, error: baseline.error };
  return { ok: true, entries: baseline.entries, pending: baseline.entries.length > 0 };
}

/** Both ledgers' entries, one per pod uid (the later charge). */
export function mergeLedgers(a: readonly LedgerEntry[], b: readonly LedgerEntry[]): LedgerEntry[] {
  let out = [...a];
  for (const e of b) {
    const earlier = out.find((x) => x.uid === e.uid);
    if (!earlier || earlier.time < e.time) out = chargeLedger(out, e);
  }
  return out;
}

/** The ConfigMap a policy's ledger is written as: labelled, owned by the policy (garbage-collected with it). */
export function policyLedgerConfigMap(
  owner: LedgerOwner & { namespace: string },
  entries: readonly LedgerEntry[],
): {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences: Array<LedgerOwner & { controller: boolean }>;
  data: Record<string, string>;
} {
  const policyKey = `${owner.namespace}/${owner.name}`;
  return {
    name: policyLedgerName(owner.name),
    namespace: owner.namespace,
    labels: { [LABEL_LEDGER]: LEDGER_OF_POLICY, "app.kubernetes.io/managed-by": "healthprobe-operator" },
    ownerReferences: [
      { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true },
    ],
    // The operator-wide ledger's encoding; an entry from status.replacements names no deciding policy: this one.
    data: encodeOperatorLedger(entries.map((e) => (e.policy === undefined ? { ...e, policy: policyKey } : e))),
  };
}
