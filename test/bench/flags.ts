import { parseArgs } from "node:util";

/** Parses --name value flags with numeric defaults; throws naming the flag. */
export function numberFlags<K extends string>(args: string[], defaults: Record<K, number>, strings: string[] = []): Record<K, number> & { strings: Record<string, string | undefined> } {
  const options: Record<string, { type: "string" }> = {};
  for (const k of [...Object.keys(defaults), ...strings]) options[k] = { type: "string" };
  const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
  const out = { strings: {} as Record<string, string | undefined> } as Record<K, number> & { strings: Record<string, string | undefined> };
  for (const k of Object.keys(defaults) as K[]) {
    const raw = values[k] as string | undefined;
    const n = raw === undefined ? defaults[k] : Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${k}: ${JSON.stringify(raw)}: must be a positive number`);
    (out as Record<K, number>)[k] = n;
  }
  for (const k of strings) out.strings[k] = values[k] as string | undefined;
  return out;
}

/** --batch-ms: the scheduler's start grid in ms (0 = exact times); undefined keeps its default. */
export function batchFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--batch-ms: ${JSON.stringify(raw)}: must be a number >= 0`);
  return n;
}
