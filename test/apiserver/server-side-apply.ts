// Server-side apply, simplified: merges the applied configuration into the live object, tracks each
// manager's fields in managedFields (FieldsV1: an applier's the fields it applied, an updater's the
// fields its creates, updates and patches changed), removes fields an applier stopped applying, and
// reports conflicts with other managers' fields unless forced. An updater's fields: updater-fields.ts.
import { ApiError } from "./errors.js";
import { canonical, listStrategyFor } from "./patch.js";
import { apiVersionOf, type ResourceType } from "./resource-types.js";
import { clone, type KubeObject } from "./store.js";

export const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

export type Seg = { f: string } | { k: Record<string, unknown> } | { v: unknown } | { dot: true };

export function segString(s: Seg): string {
  if ("f" in s) return `f:${s.f}`;
  if ("k" in s) return `k:${JSON.stringify(canonical(s.k))}`;
  if ("v" in s) return `v:${JSON.stringify(s.v)}`;
  return ".";
}

function parseSeg(s: string): Seg {
  if (s.startsWith("f:")) return { f: s.slice(2) };
  if (s.startsWith("k:")) return { k: JSON.parse(s.slice(2)) };
  if (s.startsWith("v:")) return { v: JSON.parse(s.slice(2)) };
  return { dot: true };
}

/** How lists of this resource type merge: by key for built-ins' known lists and CRD list-map schemas. */
export function listKeys(
  t: ResourceType,
  path: string[],
  schemaAt: Record<string, any> | undefined,
): string[] | "set" | undefined {
  if (t.crd) {
    if (schemaAt?.["x-kubernetes-list-type"] === "map")
      return (schemaAt["x-kubernetes-list-map-keys"] as string[]) ?? [];
    if (schemaAt?.["x-kubernetes-list-type"] === "set") return "set";
    return undefined;
  }
  const s = listStrategyFor(t.kind, path);
  if (!s) return undefined;
  if ("mergeKey" in s) return [s.mergeKey];
  return "set";
}

export function childSchema(schema: Record<string, any> | undefined, key: string): Record<string, any> | undefined {
  if (!schema) return undefined;
  return schema.properties?.[key] ?? (isMap(schema.additionalProperties) ? schema.additionalProperties : undefined);
}

/** The fields of metadata that managers own. */
export const METADATA_FIELDS = new Set(["labels", "annotations", "finalizers", "ownerReferences"]);

/** The set of field paths a configuration sets, as lists of segments. */
function fieldPaths(
  t: ResourceType,
  value: unknown,
  path: string[],
  segs: Seg[],
  schema: Record<string, any> | undefined,
  out: Seg[][],
): void {
  if (isMap(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (path.length === 0 && (k === "apiVersion" || k === "kind")) continue;
      if (path.length === 1 && path[0] === "metadata" && !METADATA_FIELDS.has(k)) continue;
      const p = [...path, k];
      const s = [...segs, { f: k } as Seg];
      const sub = childSchema(schema, k);
      if (isMap(v) && Object.keys(v).length > 0) fieldPaths(t, v, p, s, sub, out);
      else if (Array.isArray(v)) {
        const keys = listKeys(t, p, sub);
        if (keys === "set") {
          for (const item of v) out.push([...s, { v: item }]);
        } else if (keys && v.every((i) => isMap(i))) {
          for (const item of v as Array<Record<string, unknown>>) {
            const key = Object.fromEntries(keys.map((kk) => [kk, item[kk]]));
            const es = [...s, { k: key } as Seg];
            out.push([...es, { dot: true }]);
            fieldPaths(t, item, p, es, sub?.items, out);
          }
        } else out.push(s);
      } else out.push(s);
    }
  }
}

function toFieldsV1(paths: Seg[][]): Record<string, any> {
  const root: Record<string, any> = {};
  for (const p of paths) {
    let cur = root;
    for (const seg of p) {
      const k = segString(seg);
      cur[k] ??= {};
      cur = cur[k];
    }
  }
  return root;
}

export function fromFieldsV1(tree: Record<string, any> | undefined, prefix: Seg[] = [], out: Seg[][] = []): Seg[][] {
  if (!isMap(tree)) return out;
  for (const [k, v] of Object.entries(tree)) {
    const p = [...prefix, parseSeg(k)];
    if (isMap(v) && Object.keys(v).length > 0) fromFieldsV1(v, p, out);
    else out.push(p);
  }
  return out;
}

const pathKey = (p: Seg[]): string => p.map(segString).join("/");

export function findIndex(list: unknown[], seg: Seg): number {
  if ("k" in seg)
    return list.findIndex(
      (i) => isMap(i) && Object.entries(seg.k).every(([k, v]) => JSON.stringify(i[k]) === JSON.stringify(v)),
    );
  if ("v" in seg) return list.findIndex((i) => JSON.stringify(i) === JSON.stringify(seg.v));
  return -1;
}

function getPath(obj: unknown, path: Seg[]): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if ("dot" in seg) return cur;
    if ("f" in seg) cur = isMap(cur) ? cur[seg.f] : undefined;
    else if (Array.isArray(cur)) {
      const i = findIndex(cur, seg);
      cur = i >= 0 ? cur[i] : undefined;
      if ("v" in seg && i >= 0) return cur;
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function removePath(obj: unknown, path: Seg[]): void {
  const last = path[path.length - 1];
  if (!last) return;
  if ("dot" in last) return removePath(obj, path.slice(0, -1));
  const parent = getPath(obj, path.slice(0, -1));
  if ("f" in last) {
    if (isMap(parent)) delete parent[last.f];
  } else if (Array.isArray(parent)) {
    const i = findIndex(parent, last);
    if (i >= 0) parent.splice(i, 1);
  }
}

function merge(
  t: ResourceType,
  live: unknown,
  applied: unknown,
  path: string[],
  schema: Record<string, any> | undefined,
): unknown {
  if (isMap(applied)) {
    const out: Record<string, any> = isMap(live) ? clone(live) : {};
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) {
        delete out[k];
        continue;
      }
      out[k] = merge(t, out[k], v, [...path, k], childSchema(schema, k));
    }
    return out;
  }
  if (Array.isArray(applied)) {
    const keys = listKeys(t, path, schema);
    const liveList = Array.isArray(live) ? clone(live) : [];
    if (keys === "set") {
      for (const item of applied)
        if (!liveList.some((l) => JSON.stringify(l) === JSON.stringify(item))) liveList.push(item);
      return liveList;
    }
    if (keys && applied.every((i) => isMap(i))) {
      for (const item of applied as Array<Record<string, unknown>>) {
        const seg = { k: Object.fromEntries(keys.map((kk) => [kk, item[kk]])) };
        const i = findIndex(liveList, seg);
        if (i >= 0) liveList[i] = merge(t, liveList[i], item, path, schema?.items);
        else liveList.push(clone(item));
      }
      return liveList;
    }
    return clone(applied);
  }
  return applied;
}

export interface ApplyResult {
  object: KubeObject;
  fieldsV1: Record<string, any>;
  managedFields: Array<Record<string, any>>;
}

export function applyConfiguration(
  t: ResourceType,
  live: KubeObject | undefined,
  applied: KubeObject,
  manager: string,
  force: boolean,
  subresource = "",
): ApplyResult {
  const schema = t.crd?.schema;
  const appliedPaths: Seg[][] = [];
  fieldPaths(t, applied, [], [], schema, appliedPaths);
  const fieldsV1 = toFieldsV1(appliedPaths);
  const entries = clone((live?.metadata?.managedFields ?? []) as Array<Record<string, any>>);
  const mine = entries.find(
    (e) => e.manager === manager && e.operation === "Apply" && (e.subresource ?? "") === subresource,
  );
  // Updaters' fields conflict too: a field someone changed with a PUT or patch is theirs until forced.
  const others = entries.filter((e) => e !== mine);
  const appliedSet = new Set(appliedPaths.map(pathKey));
  const conflicts: Array<{ manager: string; path: Seg[] }> = [];
  // The real message names an updater with the apiVersion it wrote: "kubectl-edit" using apps/v1.
  const who = (e: Record<string, any>): string =>
    e.operation === "Update" ? `"${e.manager}" using ${e.apiVersion}` : `"${e.manager}"`;
  if (live) {
    for (const other of others) {
      for (const p of fromFieldsV1(other.fieldsV1)) {
        // A list item's own entry (".") is membership, not a value: only its fields can conflict.
        if (!appliedSet.has(pathKey(p)) || "dot" in p[p.length - 1]!) continue;
        const a = JSON.stringify(canonical(getPath(applied, p)));
        const l = JSON.stringify(canonical(getPath(live, p)));
        if (a !== l) conflicts.push({ manager: who(other), path: p });
      }
    }
  }
  if (conflicts.length > 0 && !force) {
    const describe = (c: { manager: string; path: Seg[] }): string =>
      `conflict with ${c.manager}: .${c.path
        .map((s) =>
          "f" in s
            ? s.f
            : "k" in s
              ? `[${Object.entries(s.k)
                  .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
                  .join(",")}]`
              : "v" in s
                ? `[${JSON.stringify(s.v)}]`
                : "",
        )
        .filter((x) => x)
        .join(".")
        .replace(/\.\[/g, "[")}`;
    const message =
      conflicts.length === 1
        ? `Apply failed with 1 conflict: ${describe(conflicts[0]!)}`
        : `Apply failed with ${conflicts.length} conflicts: ${conflicts.map(describe).join("\n")}`;
    throw new ApiError(409, "Conflict", message, {
      causes: conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: `conflict with ${c.manager}`,
        field:
          "." +
          c.path
            .map((s) => ("f" in s ? s.f : ""))
            .filter((x) => x)
            .join("."),
      })),
    });
  }
  let object = merge(t, live ? clone(live) : {}, applied, [], schema) as KubeObject;
  if (live && mine) {
    const owned = new Set<string>();
    for (const o of entries) if (o !== mine) for (const p of fromFieldsV1(o.fieldsV1)) owned.add(pathKey(p));
    for (const p of fromFieldsV1(mine.fieldsV1)) {
      const k = pathKey(p);
      if (!appliedSet.has(k) && !owned.has(k)) removePath(object, p);
    }
  }
  // Forced conflicts move ownership to this applier.
  for (const other of others) {
    const kept = fromFieldsV1(other.fieldsV1).filter(
      (p) => !(appliedSet.has(pathKey(p)) && conflicts.some((c) => pathKey(c.path) === pathKey(p))),
    );
    other.fieldsV1 = toFieldsV1(kept);
  }
  const remaining = entries.filter((e) => e === mine || Object.keys(e.fieldsV1 ?? {}).length > 0);
  object = object ?? {};
  object.metadata = isMap(object.metadata) ? object.metadata : {};
  const entry: Record<string, any> = {
    manager,
    operation: "Apply",
    apiVersion: apiVersionOf(t),
    time: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    fieldsType: "FieldsV1",
    fieldsV1,
  };
  if (subresource) entry.subresource = subresource;
  const managedFields = [...remaining.filter((e) => e !== mine), entry];
  object.metadata.managedFields = managedFields;
  return { object, fieldsV1, managedFields };
}
