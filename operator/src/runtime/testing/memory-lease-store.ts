// A LeaseStore in memory for tests.
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from "../leader-election.js";

/** A LeaseStore in memory with the API server's optimistic concurrency, for tests and single-process runs. */
export class MemoryLeaseStore implements LeaseStore {
  private record: LeaseRecord | undefined;
  private version = 0;
  /** Makes the next calls fail, to simulate an unreachable API server. */
  failing = false;
  writes = 0;

  async get(): Promise<LeaseRecord | undefined> {
    if (this.failing) throw new Error("lease store unavailable");
    return this.record ? { ...this.record } : undefined;
  }

  async create(lease: LeaseRecord): Promise<LeaseRecord> {
    if (this.failing) throw new Error("lease store unavailable");
    if (this.record) throw new LeaseConflictError("lease already exists");
    this.writes++;
    this.record = { ...lease, resourceVersion: String(++this.version) };
    return { ...this.record };
  }

  async update(lease: LeaseRecord): Promise<LeaseRecord> {
    if (this.failing) throw new Error("lease store unavailable");
    if (!this.record) throw new Error("lease not found");
    if (lease.resourceVersion !== this.record.resourceVersion) throw new LeaseConflictError("stale resourceVersion");
    this.writes++;
    this.record = { ...lease, resourceVersion: String(++this.version) };
    return { ...this.record };
  }

  peek(): LeaseRecord | undefined {
    return this.record ? { ...this.record } : undefined;
  }
}
