// How late probes started behind their due times, over the most recent ones: a ring of samples
// the scheduler's stats summarise; and the stats themselves.

export interface ProbeSchedulerStats {
  /** (owner, target) pairs. */
  targets: number;
  /** Distinct requests on the wire. */
  uniqueRequests: number;
  inFlight: number;
  queued: number;
  /** How long the oldest queued probe has been due. */
  oldestQueuedMs: number;
  /** Start delay behind the due time over recent probes. */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  started: number;
  finished: number;
  /** Periods not probed because the previous probe of the same request was still running or queued. */
  skipped: number;
}

export class StartLags {
  private readonly samples: Float64Array;
  private count = 0;

  constructor(size: number) {
    this.samples = new Float64Array(Math.max(1, size));
  }

  record(lagMs: number): void {
    this.samples[this.count++ % this.samples.length] = Math.max(0, lagMs);
  }

  /** The median, 99th percentile and largest of the samples kept; 0 without any. */
  summary(): { p50: number; p99: number; max: number } {
    const n = Math.min(this.count, this.samples.length);
    const sorted = Array.from(this.samples.subarray(0, n)).sort((a, b) => a - b);
    const pick = (q: number) => (n === 0 ? 0 : (sorted[Math.min(n - 1, Math.floor(q * n))] as number));
    return { p50: pick(0.5), p99: pick(0.99), max: n === 0 ? 0 : (sorted[n - 1] as number) };
  }
}
