// The controllers' own work queue, with client-go's guarantees: a key waits at most once, is
// synced by one worker at a time, a key added while it is syncing runs once more after, and a
// failure is retried with per-key exponential backoff and reported.
export type SyncResult = void | { requeueAfterMs: number };

/** Keys of different objects are synced in parallel by this many workers. */
const WORKERS = 4;

export class WorkQueue {
  /** Keys waiting, in the order added (a Set keeps insertion order). */
  private readonly waiting = new Set<string>();
  private readonly syncing = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private stopping = false;
  private drained?: () => void;

  constructor(
    private readonly name: string,
    private readonly sync: (key: string) => Promise<SyncResult>,
    private readonly onError: (key: string, err: unknown) => void,
    private readonly baseDelayMs = 10,
    private readonly maxDelayMs = 2000,
  ) {}

  add(key: string): void {
    if (this.stopping) return;
    this.waiting.add(key);
    this.startWorkers();
  }

  /** The earliest of several delayed adds of a key wins. */
  addAfter(key: string, ms: number): void {
    if (this.stopping) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const known = this.delayed.get(key);
    if (known && known.at <= at) return;
    if (known) clearTimeout(known.timer);
    const timer = setTimeout(() => (this.delayed.delete(key), this.add(key)), ms);
    this.delayed.set(key, { at, timer });
  }

  /** Stops accepting work and waits for the keys waiting and the syncs in flight. */
  async shutDown(): Promise<void> {
    this.stopping = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    if (this.waiting.size + this.syncing.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  private startWorkers(): void {
    for (const key of this.waiting) {
      if (this.syncing.size >= WORKERS) return;
      if (this.syncing.has(key)) continue;
      this.waiting.delete(key);
      this.syncing.add(key);
      // Not within add(): the caller (an event handler, say) finishes first, as with a worker's get().
      queueMicrotask(() => void this.run(key));
    }
  }

  private async run(key: string): Promise<void> {
    try {
      const result = await this.sync(key);
      this.failures.delete(key);
      if (result && result.requeueAfterMs >= 0) this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const failures = this.failures.get(key) ?? 0;
      this.failures.set(key, failures + 1);
      this.addAfter(key, Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs));
      this.onError(key, new Error(`${this.name}: syncing ${key}`, { cause: err }));
    } finally {
      this.syncing.delete(key);
      this.startWorkers();
      if (this.waiting.size + this.syncing.size === 0) this.drained?.();
    }
  }
}
