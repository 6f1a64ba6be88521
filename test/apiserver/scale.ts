// The scale subresource (autoscaling/v1 Scale) of ReplicaSets, Deployments and custom resources with
// subresources.scale, as the real ScaleREST storages serve it: a view of the workload's replicas and
// selector whose writes become an ordinary update of the workload (resourceVersion, generation, watch
// events, managedFields with subresource "scale").
import type { Cluster, WriteContext } from "./cluster.js";
import { ApiError, badRequest, conflict, fieldErrors, invalid, methodNotAllowed, notFound } from "./errors.js";
import { applyJsonPatch, applyMergePatch } from "./patch.js";
import type { ResourceType } from "./resource-types.js";
import { clone, type KubeObject } from "./store.js";

export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** Custom resources: where the selector string lives; built-ins derive it from spec.selector. */
  labelSelectorPath?: string;
}

export interface ScaleRequest {
  verb: string;
  body: () => unknown;
  raw: string;
  contentType: string;
}

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

const BUILTIN_PATHS: ScalePaths = { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" };

function pathsOf(t: ResourceType): ScalePaths {
  return t.crd?.scale ?? BUILTIN_PATHS;
}

function split(path: string): string[] {
  return path.replace(/^\./, "").split(".");
}

function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const seg of split(path)) cur = isMap(cur) ? cur[seg] : undefined;
  return cur;
}

function setPath(obj: Record<string, any>, path: string, value: unknown): void {
  const segs = split(path);
  let cur = obj;
  for (const seg of segs.slice(0, -1)) {
    if (!isMap(cur[seg])) cur[seg] = {};
    cur = cur[seg];
  }
  cur[segs[segs.length - 1]!] = value;
}

/** labels.Selector.String() of metav1.LabelSelectorAsSelector: requirements sorted by key, values sorted. */
export function selectorString(selector: unknown): string {
  if (!isMap(selector)) return "";
  const reqs: Array<{ key: string; text: string }> = [];
  for (const [k, v] of Object.entries(isMap(selector.matchLabels) ? selector.matchLabels : {}))
    reqs.push({ key: k, text: `${k}=${String(v)}` });
  for (const e of Array.isArray(selector.matchExpressions)
    ? (selector.matchExpressions as Array<Record<string, any>>)
    : []) {
    const values = [...((e.values ?? []) as string[])].sort().join(",");
    const text =
      e.operator === "In"
        ? `${e.key} in (${values})`
        : e.operator === "NotIn"
          ? `${e.key} notin (${values})`
          : e.operator === "DoesNotExist"
            ? `!${e.key}`
            : String(e.key);
    reqs.push({ key: String(e.key), text });
  }
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(",");
}

/** unstructured.NestedInt64 for custom resources: absent is fine, any other type is an error. */
function nestedInt(obj: KubeObject, path: string): number | undefined {
  const v = getPath(obj, path);
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) {
    const type =
      typeof v === "number"
        ? "float64"
        : typeof v === "string"
          ? "string"
          : typeof v === "boolean"
            ? "bool"
            : Array.isArray(v)
              ? "[]interface {}"
              : "map[string]interface {}";
    throw new ApiError(
      500,
      "InternalError",
      `Internal error occurred: ${path.replace(/^\./, "")} accessor error: ${JSON.stringify(v)} is of the type ${type}, expected int64`,
    );
  }
  return v;
}

/** The Scale of a workload as the client sees it (spec.replicas omitted when 0, as the omitempty int32). */
export function scaleOf(t: ResourceType, obj: KubeObject): KubeObject {
  const paths = pathsOf(t);
  const specReplicas = t.crd
    ? (nestedInt(obj, paths.specReplicasPath) ?? 0)
    : Number(getPath(obj, paths.specReplicasPath) ?? 0);
  const statusReplicas = t.crd
    ? (nestedInt(obj, paths.statusReplicasPath) ?? 0)
    : Number(getPath(obj, paths.statusReplicasPath) ?? 0);
  const selector = t.crd
    ? paths.labelSelectorPath
      ? getPath(obj, paths.labelSelectorPath)
      : undefined
    : selectorString(obj.spec?.selector);
  const m = obj.metadata;
  return {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: specReplicas !== 0 ? { replicas: specReplicas } : {},
    status: { replicas: statusReplicas, ...(typeof selector === "string" && selector !== "" ? { selector } : {}) },
  };
}

/** GET, PUT and PATCH of `<resource>/<name>/scale`. */
export function serveScale(
  cluster: Cluster,
  t: ResourceType,
  namespace: string | undefined,
  name: string,
  req: ScaleRequest,
  ctx: WriteContext,
): KubeObject {
  switch (req.verb) {
    case "get":
      return scaleOf(t, current(cluster, t, namespace, name, "get"));
    case "update":
      return writeScale(cluster, t, namespace, name, ctx, () => req.body());
    case "patch":
      return writeScale(cluster, t, namespace, name, ctx, (old) => patchScale(old, req.contentType, req.raw));
    default:
      throw methodNotAllowed("the server does not allow this method on the requested resource");
  }
}

function current(
  cluster: Cluster,
  t: ResourceType,
  namespace: string | undefined,
  name: string,
  verb: string,
): KubeObject {
  const obj = cluster.store.get(cluster.key(t), t.namespaced ? namespace : undefined, name);
  if (!obj) {
    // The built-in ScaleREST.Get names the subresource; writes fail in the workload's own storage first.
    throw notFound(t.group, verb === "get" && !t.crd ? `${t.plural}/scale` : t.plural, name);
  }
  const presented = cluster.present(t, obj);
  // A custom resource without its spec replicas field has no scale to read (the real server's 500).
  if (verb === "get" && t.crd && nestedInt(presented, pathsOf(t).specReplicasPath) === undefined) {
    throw new ApiError(
      500,
      "InternalError",
      `Internal error occurred: the spec replicas field "${pathsOf(t).specReplicasPath}" does not exist`,
    );
  }
  return presented;
}

function patchScale(old: KubeObject, contentType: string, raw: string): unknown {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  const decode = (): unknown => {
    try {
      return JSON.parse(raw);
    } catch (err) {
      throw badRequest(`error decoding patch: ${(err as Error).message}`);
    }
  };
  switch (type) {
    // Scale has no lists, so a strategic merge patch merges as a JSON merge patch does.
    case "application/merge-patch+json":
    case "application/strategic-merge-patch+json":
      return applyMergePatch(old, decode());
    case "application/json-patch+json":
      return applyJsonPatch(old, decode());
    default:
      // Server-side apply to the scale subresource is not implemented here.
      throw new ApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
        {},
      );
  }
}

/** The smallest int32: marks an unset spec replicas field of a custom resource. */
const INVALID_REPLICAS = -(2 ** 31);

const SCALE_FIELDS: Record<string, string[] | undefined> = {
  "": ["apiVersion", "kind", "metadata", "spec", "status"],
  spec: ["replicas"],
  status: ["replicas", "selector"],
};

/** Strict decoding of the Scale type, per fieldValidation (metadata is left to the workload). */
function reportUnknownFields(scale: Record<string, any>, ctx: WriteContext): void {
  const unknown: string[] = [];
  for (const [part, known] of Object.entries(SCALE_FIELDS)) {
    const value = part ? scale[part] : scale;
    if (!isMap(value)) continue;
    for (const k of Object.keys(value)) if (!known!.includes(k)) unknown.push(part ? `${part}.${k}` : k);
  }
  if (unknown.length === 0 || ctx.fieldValidation === "Ignore") return;
  const messages = unknown.sort().map((f) => `unknown field "${f}"`);
  if (ctx.fieldValidation === "Strict") throw badRequest(`strict decoding error: ${messages.join(", ")}`);
  ctx.warnings.push(...messages);
}

function goJsonType(v: unknown): string {
  if (typeof v === "number") return `number ${v}`;
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  return Array.isArray(v) ? "array" : "object";
}

/** Old scale → new scale (PUT body or patched) → the workload with the new replicas, updated as usual. */
function writeScale(
  cluster: Cluster,
  t: ResourceType,
  namespace: string | undefined,
  name: string,
  ctx: WriteContext,
  next: (old: KubeObject) => unknown,
): KubeObject {
  const workload = current(cluster, t, namespace, name, "write");
  const oldScale = scaleOf(t, workload);
  // A custom resource without spec replicas gives a patch nothing to start from (the real server's marker value).
  const unset = Boolean(t.crd) && nestedInt(workload, pathsOf(t).specReplicasPath) === undefined;
  if (unset) oldScale.spec = { replicas: INVALID_REPLICAS };
  const scale = next(oldScale);
  if (!isMap(scale)) throw badRequest("Object 'Kind' is missing");
  reportUnknownFields(scale, ctx);
  if (scale.apiVersion !== undefined && scale.apiVersion !== "autoscaling/v1") {
    throw badRequest(
      `the API version in the data (${scale.apiVersion}) does not match the expected API version (autoscaling/v1)`,
    );
  }
  if (scale.kind !== undefined && scale.kind !== "Scale") {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: the kind in the data (${scale.kind}) does not match the expected kind (Scale)`,
    );
  }
  const meta = isMap(scale.metadata) ? scale.metadata : {};
  if (meta.name !== undefined && meta.name !== name)
    throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
  const replicas: unknown = isMap(scale.spec) ? (scale.spec.replicas ?? 0) : 0;
  if (
    typeof replicas !== "number" ||
    !Number.isInteger(replicas) ||
    replicas < INVALID_REPLICAS ||
    replicas > 2 ** 31 - 1
  ) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${goJsonType(replicas)} into Go struct field ScaleSpec.spec.replicas of type int32`,
    );
  }
  if (unset && replicas === INVALID_REPLICAS)
    throw badRequest(`the spec replicas field "${pathsOf(t).specReplicasPath}" cannot be empty`);
  if (!t.crd) {
    // ValidateScale runs for built-ins only; a custom resource's schema judges the new value instead.
    if (replicas < 0)
      throw invalid("autoscaling", "Scale", name, [
        fieldErrors.invalid("spec.replicas", replicas, "must be greater than or equal to 0"),
      ]);
    if (meta.uid && meta.uid !== workload.metadata.uid) {
      throw conflict(
        t.group,
        `${t.plural}/scale`,
        name,
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${workload.metadata.uid}`,
      );
    }
  }
  const updated = clone(workload);
  setPath(updated, pathsOf(t).specReplicasPath, replicas);
  // An empty resourceVersion is an unconditional write; a given one is checked by the update below (409).
  updated.metadata.resourceVersion = meta.resourceVersion || workload.metadata.resourceVersion;
  return scaleOf(t, cluster.update(t, namespace, name, updated, ctx, "scale"));
}
