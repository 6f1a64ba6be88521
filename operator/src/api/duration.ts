// Go-style duration strings ("1h30m", "90s", "1.5h"), as Kubernetes users write them.

// In nanoseconds, as Go counts: summing whole nanoseconds avoids float noise (1.001s is 1001 ms, not 1000.9999999999999).
const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  "µs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** A non-negative Go duration: one or more <number><unit> parts. Also the CRD pattern. */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$";
const DURATION_RE = new RegExp(DURATION_PATTERN);
const PART_RE = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g;

/** Parses a Go-style duration into milliseconds. "0" is accepted, signs are not. */
export function parseDuration(s: string): number {
  if (s === "0") return 0;
  if (!DURATION_RE.test(s)) {
    throw new Error(`parsing duration "${s}": expected a number and a unit (ns, us, ms, s, m, h), e.g. "1h30m"`);
  }
  let ns = 0;
  for (const [, num, unit] of s.matchAll(PART_RE)) {
    ns += Math.round(Number(num) * (UNIT_NS[unit as string] as number));
  }
  return ns / 1e6;
}

/** Formats milliseconds compactly in the same syntax: 5400000 -> "1h30m", 1500 -> "1.5s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0)
    throw new Error(`formatting duration ${ms}: must be a finite, non-negative number`);
  if (ms === 0) return "0s";
  if (ms < 1000) return `${trim(ms)}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  let out = "";
  if (hours > 0) out += `${hours}h`;
  if (minutes > 0) out += `${minutes}m`;
  if (seconds > 0) out += `${trim(seconds)}s`;
  return out;
}

// Avoids float noise such as 1.5000000000000002s.
function trim(n: number): string {
  return String(Number(n.toFixed(6)));
}
