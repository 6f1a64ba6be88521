import type { EpochMs } from "./types.js";

/**
 * RFC 3339 at second precision, as metav1.Time serialises: status round-trips through
 * the API unchanged, so a recomputed status compares equal to the stored one.
 */
export function toRfc3339(ms: EpochMs): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Epoch ms of an RFC 3339 string, or undefined when it does not parse. */
export function fromRfc3339(text: string | undefined): EpochMs | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
