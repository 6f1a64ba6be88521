// How far V8 lets the old generation grow past what the last full GC kept before it collects
// again. Left to itself V8 grows it by up to 4x the live heap when GC looks cheap: at 10,000
// pods about 70 MB live became 170-190 MB of heap between full GCs, and a peak RSS that
// varied from 250 to 370 MB between runs. At 50 % it stays within 1.5x for a few more full
// GCs (each 30-60 ms at that size, one every 15-20 s with probes at 1,000/s). V8 reads the
// flag whenever it sizes the heap, so setting it at start takes effect.
import { setFlagsFromString } from "node:v8";

/** The V8 flag for a growth percent; undefined for 0 (V8's own heuristics). */
export function heapGrowthFlag(percent: number): string | undefined {
  return percent > 0 ? `--heap-growing-percent=${percent}` : undefined;
}

export function applyHeapGrowth(percent: number, set: (flag: string) => void = setFlagsFromString): void {
  const flag = heapGrowthFlag(percent);
  if (flag) set(flag);
}
