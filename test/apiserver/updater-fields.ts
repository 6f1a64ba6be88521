// managedFields of an updater (a create, update or non-apply patch): the fields a write changed
// become its manager's and leave every other manager's entry, as the real field manager does.
import { jsonEqual } from "./json-equal.js";
import type { ResourceType } from "./resource-types.js";
import {
  METADATA_FIELDS,
  childSchema,
  findIndex,
  fromFieldsV1,
  isMap,
  listKeys,
  segString,
  type Seg,
} from "./server-side-apply.js";
import type { KubeObject } from "./store.js";

/**
 * managedFields after a create, update or non-apply patch by `manager`: the fields it changed become
 * its own and leave every other manager, whose entry goes once it owns nothing (as the real field
 * manager does). `old` is undefined on create, where every field counts as changed.
 */
export function updaterManagedFields(
  t: ResourceType,
  old: KubeObject | undefined,
  obj: KubeObject,
  entries: Array<Record<string, any>>,
  manager: string,
  subresource: string,
): { fieldsV1: Record<string, any>; others: Array<Record<string, any>> } {
  const isMine = (e: Record<string, any>): boolean =>
    e.manager === manager && e.operation === "Update" && (e.subresource ?? "") === subresource;
  const previous = entries.find(isMine);
  const present: KeyedPath[] = [];
  const changed: KeyedPath[] = [];
  // On create every field counts as changed: compared with nothing, nothing is the same.
  const top = old === undefined ? { walk: obj, differs: true } : topFieldsToWalk(obj, old, previous?.fieldsV1);
  const at: Compared =
    old === undefined
      ? { a: obj, b: undefined, same: false, created: true }
      : { a: obj, b: old, same: !top.differs && jsonEqual(obj, old), created: false };
  updatedPaths(t, top.walk, at, [], [], "", t.crd?.schema, { present, changed });
  const written = new Map<Seg, string>();
  const changedKeys = new Set(changed.map((p) => p.key));
  const changedTops = new Set(changed.map((p) => p.strs[0]));
  const presentKeys = new Set(present.map((p) => p.key));
  const kept = fromFieldsV1(previous?.fieldsV1)
    .map((p) => keyed(p, written))
    .filter((p) => presentKeys.has(p.key) && !changedKeys.has(p.key));
  const without = (tree: Record<string, any> | undefined): Record<string, any> =>
    treeOf(
      fromFieldsV1(tree)
        .map((p) => keyed(p, written))
        .filter((p) => !changedKeys.has(p.key)),
    );
  const others = entries
    .filter((e) => !isMine(e))
    .map((e) => {
      // A create's entries may come from the body: all are written anew. Stored ones are already in
      // canonical form: only their top-level fields that hold a changed path are.
      if (old === undefined) return { ...e, fieldsV1: without(e.fieldsV1) };
      if (!Object.keys(e.fieldsV1 ?? {}).some((k) => changedTops.has(k))) return e;
      const fieldsV1: Record<string, any> = {};
      for (const [top, sub] of Object.entries(e.fieldsV1 as Record<string, any>)) {
        const kept = changedTops.has(top) ? without({ [top]: sub })[top] : sub;
        if (kept !== undefined) fieldsV1[top] = kept;
      }
      return { ...e, fieldsV1 };
    })
    .filter((e) => Object.keys(e.fieldsV1 ?? {}).length > 0);
  return { fieldsV1: treeOf([...kept, ...changed]), others };
}

/**
 * The top-level fields of `obj` whose paths an update must look at: those that differ from `old`
 * (only they can hold a changed path) and those the manager owned before (kept only where still
 * present). On a status write that is status alone: metadata and spec are never walked.
 */
function topFieldsToWalk(
  obj: KubeObject,
  old: KubeObject,
  ownedBefore: Record<string, any> | undefined,
): { walk: KubeObject; differs: boolean } {
  const owned = new Set(Object.keys(ownedBefore ?? {}));
  const walk: KubeObject = {};
  let differs = false;
  for (const k of Object.keys(obj)) {
    const changed = !jsonEqual(obj[k], old[k]);
    differs ||= changed;
    if (changed || owned.has(`f:${k}`)) walk[k] = obj[k];
  }
  // A field that differs makes the objects differ: no need to compare them whole.
  return { walk, differs };
}

/** A field path written out: its segments' text and, joined, its key. */
interface KeyedPath {
  strs: string[];
  key: string;
}

/** Paths under one list item share its segment object: `written` keeps each segment's text. */
function keyed(segs: Seg[], written: Map<Seg, string>): KeyedPath {
  const strs = segs.map((seg) => {
    let text = written.get(seg);
    if (text === undefined) written.set(seg, (text = segString(seg)));
    return text;
  });
  return { strs, key: strs.join("/") };
}

/** toFieldsV1 of paths already written out. */
function treeOf(paths: KeyedPath[]): Record<string, any> {
  const root: Record<string, any> = {};
  for (const p of paths) {
    let cur = root;
    for (const k of p.strs) {
      cur[k] ??= {};
      cur = cur[k];
    }
  }
  return root;
}

/**
 * Where a path prefix leads in the written object (`a`) and in the stored one (`b`), as getPath
 * reads them, and whether the two are the same there (then so is everything under it).
 */
interface Compared {
  a: unknown;
  b: unknown;
  same: boolean;
  created: boolean;
}

function leaf(out: { present: KeyedPath[]; changed: KeyedPath[] }, strs: string[], key: string, same: boolean): void {
  const p = { strs, key };
  out.present.push(p);
  if (!same) out.changed.push(p);
}

/** One more segment of both getPaths: a missing value reads as null. */
function stepped(at: Compared, seg: Seg): Compared {
  if (at.created || at.same) return at;
  const a = stepInto(at.a, seg);
  const b = stepInto(at.b, seg);
  return { a, b, same: jsonEqual(a ?? null, b ?? null), created: false };
}

/** One segment of getPath. */
function stepInto(cur: unknown, seg: Seg): unknown {
  if ("f" in seg) return isMap(cur) ? cur[seg.f] : undefined;
  if (!Array.isArray(cur)) return undefined;
  const i = findIndex(cur, seg);
  return i >= 0 ? cur[i] : undefined;
}

/**
 * fieldPaths of `value`, written out, each also in `changed` when its value (as getPath reads it)
 * differs between the written and the stored object: one walk that compares each prefix once (a
 * list item is found once for all its fields) and nothing under a prefix whose values are the same.
 */
function updatedPaths(
  t: ResourceType,
  value: unknown,
  at: Compared,
  path: string[],
  strs: string[],
  key: string,
  schema: Record<string, any> | undefined,
  out: { present: KeyedPath[]; changed: KeyedPath[] },
): void {
  if (!isMap(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (path.length === 0 && (k === "apiVersion" || k === "kind")) continue;
    if (path.length === 1 && path[0] === "metadata" && !METADATA_FIELDS.has(k)) continue;
    const p = [...path, k];
    const seg = `f:${k}`;
    const s = [...strs, seg];
    const sk = key === "" ? seg : `${key}/${seg}`;
    const here = stepped(at, { f: k });
    const sub = childSchema(schema, k);
    if (isMap(v) && Object.keys(v).length > 0) updatedPaths(t, v, here, p, s, sk, sub, out);
    else if (Array.isArray(v)) {
      const keys = listKeys(t, p, sub);
      if (keys === "set") {
        for (const item of v) {
          const vs = `v:${JSON.stringify(item)}`;
          leaf(out, [...s, vs], `${sk}/${vs}`, stepped(here, { v: item }).same);
        }
      } else if (keys && v.every((i) => isMap(i))) {
        for (const item of v as Array<Record<string, unknown>>) {
          const kseg: Seg = { k: Object.fromEntries(keys.map((kk) => [kk, item[kk]])) };
          const ks = segString(kseg);
          const es = [...s, ks];
          const ek = `${sk}/${ks}`;
          const itemAt = stepped(here, kseg);
          leaf(out, [...es, "."], `${ek}/.`, itemAt.same);
          updatedPaths(t, item, itemAt, p, es, ek, sub?.items, out);
        }
      } else leaf(out, s, sk, here.same);
    } else leaf(out, s, sk, here.same);
  }
}
