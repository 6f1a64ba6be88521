import { parseArgs } from "node:util";

/** A bad flag: the dispatcher prints its message and the benchmark's usage, not a stack trace. */
export class FlagError extends Error {}

/** Parses --name value flags with numeric defaults; throws a FlagError naming the flag. */
export function numberFlags<K extends string>(
  args: string[],
  defaults: Record<K, number>,
  strings: string[] = [],
): Record<K, number> & { strings: Record<string, string | undefined> } {
  const options: Record<string, { type: "string" }> = {};
  for (const k of [...Object.keys(defaults), ...strings]) options[k] = { type: "string" };
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const out = { strings: {} as Record<string, string | undefined> } as Record<K, number> & {
    strings: Record<string, string | undefined>;
  };
  for (const k of Object.keys(defaults) as K[]) {
    const raw = values[k] as string | undefined;
    const n = raw === undefined ? defaults[k] : Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new FlagError(`--${k}: ${JSON.stringify(raw)}: must be a positive number`);
    (out as Record<K, number>)[k] = n;
  }
  for (const k of strings) out.strings[k] = values[k] as string | undefined;
  return out;
}

/** --batch-ms: the scheduler's start grid in ms (0 = exact times); undefined keeps its default. */
export function batchFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new FlagError(`--batch-ms: ${JSON.stringify(raw)}: must be a number >= 0`);
  return n;
}

/** --scenarios 1,3: which of the numbered scenarios `all` to run (default: every one). */
export function scenariosFlag(raw: string | undefined, all: readonly number[] = [1, 2, 3, 4]): Set<number> {
  if (raw === undefined) return new Set(all);
  const picked = raw.split(",").map((x) => Number(x.trim()));
  if (picked.some((n) => !all.includes(n)))
    throw new FlagError(`--scenarios: ${JSON.stringify(raw)}: must be a comma-separated list of ${all.join(", ")}`);
  return new Set(picked);
}
