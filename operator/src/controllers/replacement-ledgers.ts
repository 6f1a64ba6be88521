// The replacement ledgers as versions: each policy's ConfigMap (policy-ledgers.ts) and the
// operator-wide ConfigMap are read with the resourceVersion they were read at, and every charge or
// refund is written conditionally on exactly that version (a 409 is a requeue), so no worker and
// no replica can write over a charge it has not seen.
import { DAY_MS, TWELVE_HOURS_MS, computeOperatorBudget, pruneLedger, type LedgerEntry } from "../domain/budget.js";
import { chargeLedger, decodeOperatorLedger, encodeOperatorLedger, refundLedger } from "../domain/ledger.js";
import type { Logger } from "../runtime/logger.js";
import type { NamedPolicy } from "./kube-objects.js";
import { PolicyLedgers, type PolicyLedger, type PolicyLedgersOptions } from "./policy-ledgers.js";
import { conflictIsStale, metadataOf, type PolicyWriter } from "./policy-writer.js";

export type { PolicyLedger } from "./policy-ledgers.js";

export const DEFAULT_LEDGER_CONFIGMAP = "healthprobe-operator-ledger";

/** The operator-wide ledger at one version; entries null when it cannot be read. */
export interface OperatorLedger {
  entries: LedgerEntry[] | null;
  resourceVersion: string | undefined;
}

export interface LedgerStoreOptions extends Omit<PolicyLedgersOptions, "writer"> {
  writer: Pick<PolicyWriter, "readConfigMap" | "writeConfigMap" | "writePolicyLedger" | "findConfigMap">;
  operatorNamespace: string;
  configMapName?: string;
  maxReplacementsPer12h: number;
  /** Told the operator-wide remaining budget whenever the ledger is read or written. */
  onOperatorRemaining?: (remaining: number) => void;
}

export class LedgerStore {
  private readonly policies: PolicyLedgers;

  constructor(private readonly o: LedgerStoreOptions) {
    this.policies = new PolicyLedgers(o);
  }

  policy(obj: NamedPolicy): PolicyLedger {
    return this.policies.read(obj);
  }

  /** Charges (or refunds) one entry to a policy ledger, over the version it was read at. */
  async updatePolicy(
    ledger: PolicyLedger,
    change: "charge" | "refund",
    entry: LedgerEntry,
    now: number,
  ): Promise<PolicyLedger> {
    return this.policies.write(ledger, applyChange(ledger.entries ?? [], change, entry, now, DAY_MS));
  }

  /**
   * Moves a ledger not yet in a ConfigMap the policy owns (status.replacements of an earlier
   * version, or a deleted namesake's ConfigMap) into its own, even without a charge.
   */
  async persistPending(ledger: PolicyLedger, now: number): Promise<PolicyLedger> {
    if (!ledger.pending || ledger.entries === null) return ledger;
    const entries = pruneLedger(ledger.entries, now, DAY_MS);
    return entries.length === 0 ? ledger : this.policies.write(ledger, entries);
  }

  forget(key: string): void {
    this.policies.forget(key);
  }

  /** Reads the operator-wide ledger fresh from the API. */
  async readOperator(log: Logger, now: number): Promise<OperatorLedger> {
    try {
      const cm = await this.o.writer.readConfigMap(this.o.operatorNamespace, this.name());
      const decoded = decodeOperatorLedger(cm?.data);
      if (!decoded.ok) {
        log.warn({ error: decoded.error }, "operator-wide ledger cannot be read; no replacements until it can");
        return { entries: null, resourceVersion: undefined };
      }
      this.report(decoded.entries, now);
      return { entries: decoded.entries, resourceVersion: cm?.metadata?.resourceVersion };
    } catch (err) {
      log.warn({ err }, "operator-wide ledger cannot be read; no replacements until it can");
      return { entries: null, resourceVersion: undefined };
    }
  }

  /** Charges (or refunds) the operator-wide ledger over the version it was read at. */
  async updateOperator(
    ledger: OperatorLedger,
    change: "charge" | "refund",
    entry: LedgerEntry,
    now: number,
  ): Promise<OperatorLedger> {
    const entries = applyChange(ledger.entries ?? [], change, entry, now, TWELVE_HOURS_MS);
    const out = await conflictIsStale(() =>
      this.o.writer.writeConfigMap(
        this.o.operatorNamespace,
        this.name(),
        encodeOperatorLedger(entries),
        ledger.resourceVersion,
      ),
    );
    this.report(entries, now);
    return { entries, resourceVersion: metadataOf(out)?.resourceVersion };
  }

  private report(entries: readonly LedgerEntry[], now: number): void {
    const max = this.o.maxReplacementsPer12h;
    this.o.onOperatorRemaining?.(Math.max(0, max - computeOperatorBudget(entries, now, max).used));
  }

  private name(): string {
    return this.o.configMapName ?? DEFAULT_LEDGER_CONFIGMAP;
  }
}

function applyChange(
  entries: readonly LedgerEntry[],
  change: "charge" | "refund",
  entry: LedgerEntry,
  now: number,
  keepMs: number,
): LedgerEntry[] {
  return change === "charge"
    ? pruneLedger(chargeLedger(entries, entry), now, keepMs)
    : refundLedger(entries, entry.uid, entry.time);
}
