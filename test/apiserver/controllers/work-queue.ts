// A small rate-limited work queue like client-go's: a key is processed by one worker at a time,
// adds while it is processing are remembered (dirty) and failures are retried with backoff.
export type SyncResult = void | { requeueAfterMs: number };

export class WorkQueue {
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private running = 0;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly name: string,
    private readonly sync: (key: string) => Promise<SyncResult>,
    private readonly onError: (key: string, err: unknown) => void,
    private readonly baseDelayMs = 10,
    private readonly maxDelayMs = 2000,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.running++;
    queueMicrotask(() => void this.run(key));
  }

  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.add(key);
    }, Math.max(0, ms));
    this.timers.add(timer);
  }

  private async run(key: string): Promise<void> {
    this.queued.delete(key);
    this.processing.add(key);
    try {
      const result = await this.sync(key);
      this.failures.delete(key);
      if (result && typeof result === "object") this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      this.onError(key, new Error(`${this.name}: syncing ${key}`, { cause: err }));
      this.addAfter(key, Math.min(this.baseDelayMs * 2 ** (n - 1), this.maxDelayMs));
    } finally {
      this.processing.delete(key);
      this.running--;
      if (this.dirty.delete(key)) this.add(key);
      if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Stops accepting work and waits for the syncs in flight. */
  async shutDown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
