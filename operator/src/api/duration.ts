// Go-style duration strings ("1h30m", "90s", "1.5h"), as Kubernetes users write them.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
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
  let total = 0;
  for (const [, num, unit] of s.matchAll(PART_RE)) {
    total += Number(num) * (UNIT_MS[unit as string] as number);
  }
  return total;
}

/** Formats milliseconds compactly in the same syntax: 5400000 -> "1h30m", 1500 -> "1.5s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`formatting duration ${ms}: must be a finite, non-negative number`);
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
