// A work queue with client-go's guarantees: a key is queued at most once, never handed to two
// workers at once, and a key added while in flight runs exactly once more after done().
import { realClock, type Clock, type TimerHandle } from "./clock.js";
import { BinaryHeap } from "./binary-heap.js";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiter.js";

export interface WorkQueueMetrics {
  adds?: { inc(): void };
  depth?: { set(value: number): void };
}

export interface WorkQueueOptions {
  clock?: Clock;
  rateLimiter?: RateLimiter;
  metrics?: WorkQueueMetrics;
}

interface Delayed {
  key: string;
  readyAt: number;
  seq: number;
}

export class WorkQueue {
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: WorkQueueMetrics;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  private drainWaiters: Array<() => void> = [];

  // Delayed adds: a min-heap on readyAt plus the current deadline per key, served by one timer.
  private readonly heap = new BinaryHeap<Delayed>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private readonly delayedAt = new Map<string, number>();
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private seq = 0;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = opts.metrics ?? {};
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) return;
    this.metrics.adds?.inc();
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.delayedAt.get(key);
    if (existing !== undefined && existing <= readyAt) return;
    // Earlier deadline wins; the stale heap entry is skipped when popped.
    this.delayedAt.set(key, readyAt);
    this.heap.push({ key, readyAt, seq: this.seq++ });
    this.armTimer();
  }

  addRateLimited(key: string): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Next key to process, or undefined once the queue is shut down and empty. */
  get(): Promise<string | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
    this.checkDrained();
  }

  len(): number {
    return this.queue.length;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops accepting keys and delayed adds; resolves once queued and in-flight keys are done. */
  shutDown(): Promise<void> {
    this.shuttingDown = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.heap.clear();
    this.delayedAt.clear();
    if (this.queue.length === 0) {
      for (const w of this.waiters.splice(0)) w(undefined);
    }
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
      this.checkDrained();
    });
  }

  private push(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      this.queue.push(key);
      waiter(this.take());
    } else {
      this.queue.push(key);
      this.metrics.depth?.set(this.queue.length);
    }
  }

  private take(): string {
    const key = this.queue.shift() as string;
    this.processing.add(key);
    this.dirty.delete(key);
    this.metrics.depth?.set(this.queue.length);
    if (this.shuttingDown && this.queue.length === 0) {
      for (const w of this.waiters.splice(0)) w(undefined);
    }
    return key;
  }

  private checkDrained(): void {
    if (!this.shuttingDown || this.queue.length > 0 || this.processing.size > 0) return;
    for (const w of this.waiters.splice(0)) w(undefined);
    for (const d of this.drainWaiters.splice(0)) d();
  }

  private armTimer(): void {
    const top = this.heap.peek();
    if (!top) return;
    if (top.readyAt >= this.timerAt && this.timer !== undefined) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerAt = top.readyAt;
    this.timer = this.clock.setTimeout(() => this.fireDue(), Math.max(0, top.readyAt - this.clock.now()));
  }

  private fireDue(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (;;) {
      const top = this.heap.peek();
      if (!top || top.readyAt > now) break;
      this.heap.pop();
      if (this.delayedAt.get(top.key) !== top.readyAt) continue;
      this.delayedAt.delete(top.key);
      this.add(top.key);
    }
    this.armTimer();
  }
}

/** A reconcile failure that retrying cannot fix (e.g. an invalid spec): logged, not requeued. */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TerminalError";
  }
}

export type ReconcileResult = { requeueAfterMs?: number } | void;

export interface ControllerLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface ControllerMetrics {
  reconcileDuration?: { observe(seconds: number): void };
  reconcileErrors?: { inc(): void };
}

export interface RunControllerOptions {
  queue: WorkQueue;
  workers: number;
  reconcile: (key: string) => Promise<ReconcileResult>;
  logger: ControllerLogger;
  metrics?: ControllerMetrics;
  clock?: Clock;
}

export interface RunningController {
  /** Shuts the queue down and waits for in-flight reconciles to finish. */
  stop(): Promise<void>;
  /** Resolves once every worker has exited. */
  done: Promise<void>;
}

export function runController(opts: RunControllerOptions): RunningController {
  const clock = opts.clock ?? realClock;
  const { queue, reconcile, logger, metrics } = opts;

  async function processOne(key: string): Promise<void> {
    const started = clock.now();
    try {
      const result = await reconcile(key);
      queue.forget(key);
      if (result && result.requeueAfterMs !== undefined && result.requeueAfterMs >= 0) {
        queue.addAfter(key, result.requeueAfterMs);
      }
    } catch (err) {
      metrics?.reconcileErrors?.inc();
      if (err instanceof TerminalError) {
        queue.forget(key);
        logger.error({ key, err }, "reconcile failed permanently; not retrying");
      } else {
        queue.addRateLimited(key);
        logger.error({ key, err, requeues: queue.numRequeues(key) }, "reconcile failed; retrying with backoff");
      }
    } finally {
      metrics?.reconcileDuration?.observe((clock.now() - started) / 1000);
      queue.done(key);
    }
  }

  async function worker(): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      await processOne(key);
    }
  }

  const workers = Math.max(1, opts.workers);
  const done = Promise.all(Array.from({ length: workers }, () => worker())).then(() => undefined);
  return {
    done,
    stop: async () => {
      await queue.shutDown();
      await done;
    },
  };
}
