// What changed between two versions of a policy's status, in a few words per field: the scale
// benchmark names what the writes of a quiet window changed, so a write without a change shows.

type Status = Record<string, unknown> & {
  pods?: Array<Record<string, unknown>>;
  conditions?: Array<Record<string, unknown>>;
};

/** Paths of the fields that differ, e.g. "healthy", "conditions[Degraded].message", "pods[web-1].state". */
export function statusDiff(before: Status | undefined, after: Status | undefined, limit = 10): string[] {
  const out: string[] = [];
  const a = before ?? {};
  const b = after ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    if (k === "pods" || k === "conditions") {
      const by = k === "pods" ? "name" : "type";
      out.push(
        ...listDiff(
          k,
          (a[k] ?? []) as Array<Record<string, unknown>>,
          (b[k] ?? []) as Array<Record<string, unknown>>,
          by,
        ),
      );
    } else if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) out.push(k);
  }
  return out.slice(0, limit);
}

function listDiff(
  name: string,
  a: Array<Record<string, unknown>>,
  b: Array<Record<string, unknown>>,
  by: string,
): string[] {
  const out: string[] = [];
  const before = new Map(a.map((x) => [String(x[by]), x]));
  const after = new Map(b.map((x) => [String(x[by]), x]));
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    const x = before.get(id);
    const y = after.get(id);
    if (!x || !y) {
      out.push(`${name}[${id}] ${x ? "removed" : "added"}`);
      continue;
    }
    for (const f of new Set([...Object.keys(x), ...Object.keys(y)]))
      if (JSON.stringify(x[f]) !== JSON.stringify(y[f])) out.push(`${name}[${id}].${f}`);
  }
  return out;
}
