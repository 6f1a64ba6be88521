// Controller expectations (pkg/controller/controller_utils.go): after issuing creates or deletes a
// controller waits to observe them through its watch before acting on the same key again, so a
// lagging watch never makes it create or delete twice. Expectations expire after a TTL so a lost
// event cannot wedge a key forever.
export const EXPECTATIONS_TTL_MS = 5 * 60 * 1000;

interface Expectation {
  add: number;
  /** Keys ("ns/name") of pods whose deletion is still to be observed. */
  deletions: Set<string>;
  timestamp: number;
}

export class Expectations {
  private readonly byKey = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Satisfied when nothing is pending, when never set, or when the record expired. */
  satisfied(key: string): boolean {
    const e = this.byKey.get(key);
    if (!e) return true;
    if (e.add <= 0 && e.deletions.size === 0) return true;
    return this.now() - e.timestamp > EXPECTATIONS_TTL_MS;
  }

  expectCreations(key: string, count: number): void {
    this.byKey.set(key, { add: count, deletions: new Set(), timestamp: this.now() });
  }

  expectDeletions(key: string, podKeys: string[]): void {
    this.byKey.set(key, { add: 0, deletions: new Set(podKeys), timestamp: this.now() });
  }

  creationObserved(key: string): void {
    const e = this.byKey.get(key);
    if (e) e.add--;
  }

  deletionObserved(key: string, podKey: string): void {
    this.byKey.get(key)?.deletions.delete(podKey);
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  pending(key: string): { add: number; deletions: number } {
    const e = this.byKey.get(key);
    return { add: Math.max(0, e?.add ?? 0), deletions: e?.deletions.size ?? 0 };
  }
}
