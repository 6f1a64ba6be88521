// The policy statuses this process wrote, each tied to the cached version it replaced: a reconcile
// right after a write reads what was written, not the lagging cache. The status part is the only
// writer of status (the replacement ledger is a ConfigMap of its own, status.replacements its
// mirror); every write is still conditional on the resourceVersion of the exact version it was
// read at (never a remembered newer one), so two replicas that meet in a handover get a 409,
// never a lost write.
import type { Clock } from "../runtime/clock.js";
import type { PolicyStatus } from "../domain/status.js";
import { keyOf, type NamedPolicy } from "./kube-objects.js";
import { conflictIsStale, type PolicyWriter } from "./policy-writer.js";

/** One version of a policy's status, and the resourceVersion a write over it must carry. */
export interface StatusSnapshot {
  policy: NamedPolicy;
  status: Partial<PolicyStatus> | undefined;
  resourceVersion: string | undefined;
  /** The cached resourceVersion when this snapshot was read; our write supersedes only that one. */
  cachedResourceVersion: string | undefined;
}

interface OwnWrite {
  /** The cached version this write replaced: while the cache still shows it, ours is newer. */
  over: string | undefined;
  resourceVersion: string | undefined;
  status: PolicyStatus;
}

export class StatusVersions {
  private readonly own = new Map<string, OwnWrite>();
  private readonly lastWrite = new Map<string, number>();

  constructor(
    private readonly writer: Pick<PolicyWriter, "replacePolicyStatus">,
    private readonly clock: Clock,
    private readonly onWrite: () => void = () => {},
  ) {}

  /** The newest version of the policy's status this process knows: its own write while the cache lags, else the cache's. */
  read(policy: NamedPolicy): StatusSnapshot {
    const key = keyOf(policy);
    const cached = policy.metadata.resourceVersion;
    const mine = this.own.get(key);
    if (mine && cached !== undefined && cached === mine.over) {
      return { policy, status: mine.status, resourceVersion: mine.resourceVersion, cachedResourceVersion: cached };
    }
    // The cache shows our write, or someone else's after it: the cache is the truth.
    this.own.delete(key);
    return {
      policy,
      status: policy.status as Partial<PolicyStatus> | undefined,
      resourceVersion: cached,
      cachedResourceVersion: cached,
    };
  }

  /** Replaces the status over exactly the snapshot's version; a 409 is a StaleCacheError. Returns the new snapshot. */
  async write(over: StatusSnapshot, status: PolicyStatus): Promise<StatusSnapshot> {
    const key = keyOf(over.policy);
    const target = { ...over.policy, metadata: { ...over.policy.metadata, resourceVersion: over.resourceVersion } };
    const out = await conflictIsStale(() => this.writer.replacePolicyStatus(target as never, status));
    this.own.set(key, { over: over.cachedResourceVersion, resourceVersion: out.resourceVersion, status });
    this.lastWrite.set(key, this.clock.now());
    this.onWrite();
    return {
      policy: over.policy,
      status,
      resourceVersion: out.resourceVersion,
      cachedResourceVersion: over.cachedResourceVersion,
    };
  }

  /** When this process last wrote the policy's status. */
  lastWriteAt(key: string): number | undefined {
    return this.lastWrite.get(key);
  }

  forget(key: string): void {
    this.own.delete(key);
    this.lastWrite.delete(key);
  }
}
