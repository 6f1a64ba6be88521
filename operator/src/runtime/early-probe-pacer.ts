// Paces early first probes (firstWithinMs: a restart restores every target at once): start slots
// at most perSecond apart, each at most a period away, so a burst never takes the CPU that the
// probes' own timeouts and the reconciles need.
export class EarlyProbePacer {
  private readonly spacingMs: number;
  /** The next free start slot. */
  private cursor = -Infinity;

  constructor(perSecond: number) {
    this.spacingMs = 1000 / Math.max(1, perSecond);
  }

  /** The next free start slot for an early first probe, at most a period away. */
  slot(now: number, periodMs: number): number {
    const slot = Math.max(now, this.cursor);
    this.cursor = slot + this.spacingMs;
    return Math.min(now + periodMs, Math.floor(slot));
  }
}
