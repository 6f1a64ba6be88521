// Equality as JSON sees it, without writing JSON: what the server uses to tell a no-op write.

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

const exotic = (v: unknown): boolean => typeof v === "object" && v !== null && !Array.isArray(v) && !isPlain(v);

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (v: unknown): boolean => v === undefined || typeof v === "function" || typeof v === "symbol";

/** JSON.stringify of a value with object keys sorted, for what the walk below does not take apart. */
function sortedJson(v: unknown): string | undefined {
  return JSON.stringify(v, (_k, x: unknown) =>
    isPlain(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, x[k]]),
        )
      : x,
  );
}

/** Whether JSON.stringify would write `a` and `b` alike, up to the order of object keys. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isPlain(a) && isPlain(b)) {
    let kept = 0;
    for (const k of Object.keys(a)) {
      if (omitted(a[k])) continue;
      kept++;
      if (!jsonEqual(a[k], b[k])) return false;
    }
    for (const k of Object.keys(b)) if (!omitted(b[k])) kept--;
    return kept === 0;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++)
      if (!jsonEqual(omitted(a[i]) ? null : a[i], omitted(b[i]) ? null : b[i])) return false;
    return true;
  }
  // A Date (or anything with its own toJSON) may write as a string: let JSON decide.
  if (exotic(a) || exotic(b)) return sortedJson(a) === sortedJson(b);
  // An object or array against anything else (null, a primitive, the other kind) writes differently.
  if ((typeof a === "object" && a !== null) || (typeof b === "object" && b !== null)) return false;
  // Two different primitives: alike only as JSON writes them (NaN and null, say).
  return JSON.stringify(a) === JSON.stringify(b);
}
