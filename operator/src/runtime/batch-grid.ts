// The grid that due probes start on: one wake-up starts every probe due since the last grid
// point. Each wake-up costs the event loop about the same whatever it starts, so a process that
// probes less often (a replica with its share of the targets) batches over a longer grid and
// still starts about perBatch probes per wake-up: the loop's cost per probe stays flat as the
// targets are split between replicas. The grid never grows past maxMs, nor past 2% of the
// shortest period probed, which bounds how late a probe starts.

export interface BatchGridOptions {
  /** The shortest grid, in ms; 0 starts every probe at its exact due time. */
  minMs: number;
  /** The longest grid, in ms. */
  maxMs: number;
  /** Probes a wake-up should start, at the probe rate of the requests counted. */
  perBatch: number;
}

/** At most this share of the shortest period is spent waiting for the grid. */
const SHARE_OF_PERIOD = 0.02;

export class BatchGrid {
  /** Requests counted, by period in ms: periods are few, so this map is small. */
  private readonly periods = new Map<number, number>();
  private cached: number | undefined;

  constructor(private readonly o: BatchGridOptions) {}

  /** A request probed every periodMs is scheduled. */
  add(periodMs: number): void {
    this.periods.set(periodMs, (this.periods.get(periodMs) ?? 0) + 1);
    this.cached = undefined;
  }

  /** A request counted with add() is scheduled no more. */
  remove(periodMs: number): void {
    const n = (this.periods.get(periodMs) ?? 0) - 1;
    if (n > 0) this.periods.set(periodMs, n);
    else this.periods.delete(periodMs);
    this.cached = undefined;
  }

  /** The grid in whole ms for the requests counted now. */
  ms(): number {
    if (this.cached !== undefined) return this.cached;
    let perMs = 0;
    let shortest = Infinity;
    for (const [period, n] of this.periods) {
      perMs += n / period;
      shortest = Math.min(shortest, period);
    }
    const { minMs, maxMs, perBatch } = this.o;
    const wanted = perMs > 0 ? perBatch / perMs : minMs;
    const longest = Math.min(maxMs, shortest * SHARE_OF_PERIOD);
    this.cached = minMs <= 0 ? 0 : Math.round(Math.max(minMs, Math.min(wanted, longest)));
    return this.cached;
  }
}
