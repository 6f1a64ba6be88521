// The test server's controllers run on the operator's work queue (client-go's guarantees: a key
// is processed by one worker at a time, adds while it is processing run once more after, failures
// retry with per-key exponential backoff); this only names the queue and reports each failure.
import { ItemExponentialFailureRateLimiter } from "../../../operator/src/runtime/rate-limiter.js";
import { WorkQueue as Queue, runController, type RunningController } from "../../../operator/src/runtime/work-queue.js";

export type SyncResult = void | { requeueAfterMs: number };

/** Keys of different objects are synced in parallel by this many workers. */
const WORKERS = 4;

export class WorkQueue {
  private readonly queue: Queue;
  private readonly running: RunningController;

  constructor(
    name: string,
    sync: (key: string) => Promise<SyncResult>,
    onError: (key: string, err: unknown) => void,
    baseDelayMs = 10,
    maxDelayMs = 2000,
  ) {
    this.queue = new Queue({ rateLimiter: new ItemExponentialFailureRateLimiter(baseDelayMs, maxDelayMs) });
    const logger = {
      info: () => {},
      error: (obj: object) => {
        const { key, err } = obj as { key: string; err: unknown };
        onError(key, new Error(`${name}: syncing ${key}`, { cause: err }));
      },
    };
    this.running = runController({ queue: this.queue, workers: WORKERS, reconcile: sync, logger });
  }

  add(key: string): void {
    this.queue.add(key);
  }

  addAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /** Stops accepting work and waits for the syncs in flight. */
  async shutDown(): Promise<void> {
    await this.running.stop();
  }
}
