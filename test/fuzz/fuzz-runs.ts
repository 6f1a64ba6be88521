// How many cases each differential target runs: a small count in `make test`, a large one in
// `npm run fuzz` (which sets HEALTHPROBE_FUZZ=1), or HEALTHPROBE_FUZZ_RUNS for every target.

export function fuzzRuns(inMakeTest: number, inFuzz: number): number {
  const asked = Number(process.env.HEALTHPROBE_FUZZ_RUNS);
  if (Number.isInteger(asked) && asked > 0) return asked;
  return process.env.HEALTHPROBE_FUZZ === "1" ? inFuzz : inMakeTest;
}

/** fast-check's options: the count, and HEALTHPROBE_FUZZ_SEED (with HEALTHPROBE_FUZZ_PATH) to replay a reported failure. */
export function fuzzOptions(runs: number): { numRuns: number; seed?: number; path?: string } {
  const seed = process.env.HEALTHPROBE_FUZZ_SEED;
  if (seed === undefined) return { numRuns: runs };
  const path = process.env.HEALTHPROBE_FUZZ_PATH;
  return { numRuns: runs, seed: Number(seed), ...(path ? { path } : {}) };
}

/** A jest timeout that grows with the count: a guard against a hang, not a performance bound. */
export function timeoutFor(runs: number, msPerCase: number): number {
  return 60_000 + runs * msPerCase;
}

/** Tallies outcomes by kind, printed by `npm run fuzz` so the table of differences stays honest. */
export class Tally {
  private readonly counts = new Map<string, number>();
  private readonly examples = new Map<string, string[]>();
  /** Counts one case of `kind`; the first few examples are kept for the printout. */
  add(kind: string, example?: () => string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const kept = this.examples.get(kind) ?? [];
    if (example && kept.length < 3 && process.env.HEALTHPROBE_FUZZ_EXAMPLES)
      this.examples.set(kind, [...kept, example()]);
  }
  kinds(): string[] {
    return [...this.counts.keys()];
  }
  print(title: string): void {
    if (!process.env.HEALTHPROBE_FUZZ_RUNS && process.env.HEALTHPROBE_FUZZ !== "1") return;
    const rows = [...this.counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) =>
        [
          `  ${String(n).padStart(7)}  ${k}`,
          ...(this.examples.get(k) ?? []).map((e) => `             ${e.slice(0, 300)}`),
        ].join("\n"),
      );
    process.stdout.write(`${title}\n${rows.join("\n")}\n`);
  }
}
