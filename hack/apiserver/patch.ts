// JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch for built-in kinds.
import { ApiError } from "./errors.js";
import { clone, type KubeObject } from "./store.js";

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return clone(patch);
  const out: Record<string, any> = isMap(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function unprocessable(message: string): ApiError {
  return new ApiError(422, "Invalid", message);
}

function decodePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw unprocessable(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function parentOf(doc: any, path: string[], pointer: string): { parent: any; key: string } {
  let cur = doc;
  for (const seg of path.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isMap(cur)) cur = cur[seg];
    else cur = undefined;
    if (cur === undefined) throw unprocessable(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  }
  return { parent: cur, key: path[path.length - 1]! };
}

function getAt(doc: any, pointer: string): any {
  let cur = doc;
  for (const seg of decodePointer(pointer)) {
    if (Array.isArray(cur)) cur = cur[seg === "-" ? cur.length : Number(seg)];
    else if (isMap(cur)) cur = cur[seg];
    else cur = undefined;
    if (cur === undefined) throw unprocessable(`doc is missing path: ${JSON.stringify(pointer)}: missing value`);
  }
  return cur;
}

function addAt(doc: any, pointer: string, value: unknown): any {
  const path = decodePointer(pointer);
  if (path.length === 0) return clone(value);
  const { parent, key } = parentOf(doc, path, pointer);
  if (Array.isArray(parent)) {
    const idx = key === "-" ? parent.length : Number(key);
    if (!Number.isInteger(idx) || idx < 0 || idx > parent.length)
      throw unprocessable(`add operation does not apply: doc is missing path: ${JSON.stringify(pointer)}`);
    parent.splice(idx, 0, clone(value));
  } else if (isMap(parent)) parent[key] = clone(value);
  else throw unprocessable(`add operation does not apply: doc is missing path: ${JSON.stringify(pointer)}`);
  return doc;
}

function removeAt(doc: any, pointer: string): any {
  const path = decodePointer(pointer);
  const { parent, key } = parentOf(doc, path, pointer);
  if (Array.isArray(parent)) {
    const idx = Number(key);
    if (!(idx >= 0 && idx < parent.length))
      throw unprocessable(`remove operation does not apply: doc is missing path: ${JSON.stringify(pointer)}`);
    parent.splice(idx, 1);
  } else if (isMap(parent) && key in parent) delete parent[key];
  else throw unprocessable(`remove operation does not apply: doc is missing path: ${JSON.stringify(pointer)}`);
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isMap(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  return v;
}

export function applyJsonPatch(target: KubeObject, ops: unknown): KubeObject {
  if (!Array.isArray(ops))
    throw new ApiError(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  let doc: any = clone(target);
  for (const op of ops as Array<Record<string, any>>) {
    const path = String(op.path ?? "");
    switch (op.op) {
      case "add":
        doc = addAt(doc, path, op.value);
        break;
      case "remove":
        doc = removeAt(doc, path);
        break;
      case "replace":
        getAt(doc, path);
        doc = removeAt(doc, path);
        doc = addAt(doc, path, op.value);
        break;
      case "move": {
        const v = clone(getAt(doc, String(op.from)));
        doc = removeAt(doc, String(op.from));
        doc = addAt(doc, path, v);
        break;
      }
      case "copy":
        doc = addAt(doc, path, clone(getAt(doc, String(op.from))));
        break;
      case "test": {
        let actual: unknown;
        try {
          actual = getAt(doc, path);
        } catch {
          actual = undefined;
        }
        if (!deepEqual(actual, op.value))
          throw unprocessable(
            `the server rejected our request due to an error in our request: testing value ${path} failed: test failed`,
          );
        break;
      }
      default:
        throw unprocessable(`Unexpected kind: ${String(op.op)}`);
    }
  }
  return doc;
}

/** How a list field merges under strategic merge patch: by key, as a set of primitives, or atomically. */
export type ListStrategy = { mergeKey: string } | { primitiveMerge: true } | undefined;

const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  env: "name",
  imagePullSecrets: "name",
  conditions: "type",
  ownerReferences: "uid",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  hostAliases: "ip",
  podIPs: "ip",
  resourceClaims: "name",
  schedulingGates: "name",
};

/** The patch strategy of a list in a built-in kind, from the field's name and where it sits. */
export function listStrategyFor(kind: string, path: string[]): ListStrategy {
  const field = path[path.length - 1] ?? "";
  if (field === "finalizers" && path.length === 2 && path[0] === "metadata") return { primitiveMerge: true };
  if (field === "ports") {
    if (kind === "Service" && path.join(".") === "spec.ports") return { mergeKey: "port" };
    if (path.some((p) => p === "containers" || p === "initContainers" || p === "ephemeralContainers"))
      return { mergeKey: "containerPort" };
    return undefined;
  }
  if (field === "addresses" && kind === "Node") return { mergeKey: "type" };
  if (field === "conditions" && path[0] !== "status") return undefined;
  const key = MERGE_KEYS[field];
  return key ? { mergeKey: key } : undefined;
}

export function applyStrategicMergePatch(kind: string, target: KubeObject, patch: unknown): KubeObject {
  if (!isMap(patch))
    throw new ApiError(400, "BadRequest", "json: cannot unmarshal array into Go value of type map[string]interface {}");
  return (smpMap(kind, clone(target), patch, []) ?? {}) as KubeObject;
}

function smpMap(
  kind: string,
  original: Record<string, any> | undefined,
  patch: Record<string, any>,
  path: string[],
): Record<string, any> | undefined {
  const directive = patch.$patch;
  if (directive === "delete") return undefined;
  if (directive === "replace") {
    const { $patch: _drop, ...rest } = patch;
    return stripDirectives(rest) as Record<string, any>;
  }
  const out: Record<string, any> = isMap(original) ? original : {};
  if (Array.isArray(patch.$retainKeys)) {
    const retain = new Set<string>(patch.$retainKeys as string[]);
    for (const k of Object.keys(out)) if (!retain.has(k)) delete out[k];
  }
  const orders: Array<[string, unknown[]]> = [];
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch" || k === "$retainKeys") continue;
    if (k.startsWith("$setElementOrder/")) {
      orders.push([k.slice("$setElementOrder/".length), v as unknown[]]);
      continue;
    }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length);
      if (Array.isArray(out[field])) {
        const drop = v as unknown[];
        out[field] = (out[field] as unknown[]).filter((x) => !drop.includes(x));
      }
      continue;
    }
    const childPath = [...path, k];
    if (v === null) {
      delete out[k];
    } else if (isMap(v)) {
      const merged = smpMap(kind, isMap(out[k]) ? out[k] : undefined, v, childPath);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else if (Array.isArray(v)) {
      out[k] = smpList(kind, Array.isArray(out[k]) ? out[k] : [], v, childPath);
    } else {
      out[k] = v;
    }
  }
  for (const [field, order] of orders) {
    const list = out[field];
    if (!Array.isArray(list)) continue;
    const strategy = listStrategyFor(kind, [...path, field]);
    const keyOf = (x: any): unknown => (strategy && "mergeKey" in strategy ? (isMap(x) ? x[strategy.mergeKey] : x) : x);
    const orderKeys = order.map((o) => keyOf(o));
    const indexOf = (x: any): number => {
      const i = orderKeys.findIndex((k) => deepEqual(k, keyOf(x)));
      return i < 0 ? Number.MAX_SAFE_INTEGER : i;
    };
    out[field] = [...list].sort((a, b) => indexOf(a) - indexOf(b));
  }
  return out;
}

function smpList(kind: string, original: unknown[], patch: unknown[], path: string[]): unknown[] {
  const strategy = listStrategyFor(kind, path);
  if (patch.some((p) => isMap(p) && p.$patch === "replace")) {
    return patch.filter((p) => !(isMap(p) && p.$patch === "replace")).map(stripDirectives);
  }
  if (strategy && "primitiveMerge" in strategy) {
    const out = [...original];
    for (const p of patch) if (!out.some((o) => deepEqual(o, p))) out.push(p);
    return out;
  }
  if (strategy && "mergeKey" in strategy) {
    const key = strategy.mergeKey;
    const out = original.map((o) => clone(o)) as Array<Record<string, any>>;
    for (const p of patch) {
      if (!isMap(p)) continue;
      const idx = out.findIndex((o) => isMap(o) && deepEqual(o[key], p[key]));
      if (p.$patch === "delete") {
        if (idx >= 0) out.splice(idx, 1);
        continue;
      }
      if (idx >= 0) {
        const merged = smpMap(kind, out[idx], p, path);
        if (merged === undefined) out.splice(idx, 1);
        else out[idx] = merged;
      } else {
        out.push(stripDirectives(p) as Record<string, any>);
      }
    }
    return out;
  }
  return patch.map(stripDirectives);
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isMap(v)) return v;
  const out: Record<string, any> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith("$")) continue;
    out[k] = stripDirectives(x);
  }
  return out;
}
