// HTTP status code matchers: "200" or "200-399", within 100-599.

export type StatusRange = [lo: number, hi: number];

/** Each entry: a three-digit code 100-599, or two joined by "-". Also the CRD pattern. */
export const STATUS_CODE_PATTERN = "^[1-5][0-9]{2}(-[1-5][0-9]{2})?$";
const STATUS_CODE_RE = new RegExp(STATUS_CODE_PATTERN);

/** Why an entry is not a valid code or range, or undefined when it is. */
export function statusCodeProblem(entry: string): string | undefined {
  if (!STATUS_CODE_RE.test(entry)) return `must be a status code "NNN" or a range "NNN-NNN" within 100-599`;
  const [lo, hi] = toRange(entry);
  if (lo > hi) return `range must be ordered low-high`;
  return undefined;
}

/** Parses the entries into inclusive ranges; throws naming the first invalid entry. */
export function parseStatusCodes(list: readonly string[]): StatusRange[] {
  return list.map((entry, i) => {
    const problem = statusCodeProblem(entry);
    if (problem) throw new Error(`parsing statusCodes[${i}] "${entry}": ${problem}`);
    return toRange(entry);
  });
}

export function matchesStatus(code: number, ranges: readonly StatusRange[]): boolean {
  return ranges.some(([lo, hi]) => code >= lo && code <= hi);
}

function toRange(entry: string): StatusRange {
  const [lo, hi = lo] = entry.split("-").map(Number) as [number, number?];
  return [lo, hi];
}
