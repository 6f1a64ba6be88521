// OpenAPI v3 documents: enough for kubectl's server-side field validation check, kubectl explain of
// custom resources, and kubectl apply's choice of patch type.
import { createHash } from "node:crypto";
import { apiVersionOf, type ResourceType } from "./resource-types.js";

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** Reverse-DNS schema name, like io.healthprobe.v1alpha1.HealthProbePolicy or io.k8s.api.core.v1.Pod. */
export function schemaName(t: { group: string; version: string; kind: string; crd?: unknown }): string {
  if (t.crd) return `${t.group.split(".").reverse().join(".")}.${t.version}.${t.kind}`;
  const g = t.group === "" ? "core" : t.group.replace(/\.k8s\.io$/, "");
  return `io.k8s.api.${g}.${t.version}.${t.kind}`;
}

export function openApiIndex(
  types: ResourceType[],
  gvs: Array<{ group: string; version: string }>,
): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const gv of gvs) {
    const doc = JSON.stringify(groupVersionDocument(types, gv.group, gv.version));
    const hash = createHash("sha512").update(doc).digest("hex").slice(0, 128).toUpperCase();
    paths[gvPath(gv.group, gv.version)] = {
      serverRelativeURL: `/openapi/v3/${gvPath(gv.group, gv.version)}?hash=${hash}`,
    };
  }
  return { paths };
}

// Metadata as a plain object: kubectl computes built-ins' strategic patches from its own types and
// merge-patches custom resources, so neither needs the real document's patch directives here.
const objectMetaSchema = {
  description: "Standard object's metadata.",
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
};

function gvkExt(t: ResourceType): Array<Record<string, string>> {
  return [{ group: t.group, version: t.version, kind: t.kind }];
}

function kindSchema(t: ResourceType): Record<string, unknown> {
  const base: Record<string, any> = t.crd?.schema
    ? structuredClone(t.crd.schema)
    : { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  base.properties = { ...(base.properties ?? {}) };
  base.properties.apiVersion = { type: "string" };
  base.properties.kind = { type: "string" };
  base.properties.metadata = {
    description: "Standard object's metadata.",
    allOf: [{ $ref: `#/components/schemas/${OBJECT_META}` }],
    default: {},
  };
  base.type = "object";
  base["x-kubernetes-group-version-kind"] = gvkExt(t);
  return base;
}

/** One operation, as kubectl's field-validation check reads it: its action, kind and query parameters. */
function operation(t: ResourceType, action: string, write: boolean): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${schemaName(t)}` };
  const query = ["dryRun", "fieldManager", "fieldValidation", ...(action === "patch" ? ["force"] : [])];
  return {
    responses: { "200": { description: "OK", content: { "application/json": { schema: ref } } } },
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": { group: t.group, version: t.version, kind: t.kind },
    ...(write ? { parameters: query.map((name) => ({ name, in: "query", schema: { type: "string" } })) } : {}),
    ...(action === "patch"
      ? { requestBody: { content: { "application/merge-patch+json": { schema: { type: "object" } } } } }
      : {}),
  };
}

function pathsFor(t: ResourceType): Record<string, unknown> {
  const prefix = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const collection = t.namespaced ? `${prefix}/namespaces/{namespace}/${t.plural}` : `${prefix}/${t.plural}`;
  const item = {
    get: operation(t, "get", false),
    put: operation(t, "put", true),
    patch: operation(t, "patch", true),
    delete: operation(t, "delete", false),
  };
  return {
    [collection]: { post: operation(t, "post", true) },
    [`${collection}/{name}`]: item,
    ...(t.subresources.includes("status") ? { [`${collection}/{name}/status`]: item } : {}),
  };
}

export function groupVersionDocument(types: ResourceType[], group: string, version: string): Record<string, unknown> {
  const mine = types.filter((t) => t.group === group && t.version === version);
  const schemas: Record<string, unknown> = {
    [OBJECT_META]: objectMetaSchema,
  };
  let paths: Record<string, unknown> = {};
  for (const t of mine) {
    schemas[schemaName(t)] = kindSchema(t);
    paths = { ...paths, ...pathsFor(t) };
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.33.0" },
    paths,
    components: { schemas },
    "x-api-version": apiVersionOf({ group, version }),
  };
}
