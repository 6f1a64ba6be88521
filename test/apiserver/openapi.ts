// OpenAPI v3 documents: enough for kubectl's server-side field validation check, kubectl explain of
// custom resources, and kubectl apply's choice of patch type.
import { createHash } from "node:crypto";
import { apiVersionOf, type ResourceType } from "./resource-types.js";

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

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

const objectMetaSchema = {
  description:
    "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
  type: "object",
  properties: {
    name: { description: "Name must be unique within a namespace.", type: "string" },
    generateName: {
      description:
        "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.",
      type: "string",
    },
    namespace: { description: "Namespace defines the space within which each name must be unique.", type: "string" },
    uid: { description: "UID is the unique in time and space value for this object.", type: "string" },
    resourceVersion: {
      description: "An opaque value that represents the internal version of this object.",
      type: "string",
    },
    generation: {
      description: "A sequence number representing a specific generation of the desired state.",
      type: "integer",
      format: "int64",
    },
    creationTimestamp: {
      description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
      type: "string",
      format: "date-time",
    },
    deletionTimestamp: {
      description: "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted.",
      type: "string",
      format: "date-time",
    },
    labels: {
      description: "Map of string keys and values that can be used to organize and categorize objects.",
      type: "object",
      additionalProperties: { type: "string", default: "" },
    },
    annotations: {
      description: "Annotations is an unstructured key value map stored with a resource.",
      type: "object",
      additionalProperties: { type: "string", default: "" },
    },
    finalizers: {
      description: "Must be empty before the object is deleted from the registry.",
      type: "array",
      items: { type: "string", default: "" },
      "x-kubernetes-list-type": "set",
      "x-kubernetes-patch-strategy": "merge",
    },
    ownerReferences: {
      description: "List of objects depended by this object.",
      type: "array",
      items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      "x-kubernetes-patch-merge-key": "uid",
      "x-kubernetes-patch-strategy": "merge",
    },
    managedFields: {
      description: "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.",
      type: "array",
      items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
  },
};

function gvkExt(t: ResourceType): Array<Record<string, string>> {
  return [{ group: t.group, version: t.version, kind: t.kind }];
}

function kindSchema(t: ResourceType): Record<string, unknown> {
  const base: Record<string, any> = t.crd?.schema
    ? structuredClone(t.crd.schema)
    : { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  base.properties = { ...(base.properties ?? {}) };
  base.properties.apiVersion = {
    description:
      "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
    type: "string",
  };
  base.properties.kind = {
    description:
      "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to.",
    type: "string",
  };
  base.properties.metadata = {
    description: "Standard object's metadata.",
    allOf: [{ $ref: `#/components/schemas/${OBJECT_META}` }],
    default: {},
  };
  base.type = "object";
  base["x-kubernetes-group-version-kind"] = gvkExt(t);
  return base;
}

function listSchema(t: ResourceType): Record<string, unknown> {
  return {
    description: `${t.listKind} is a list of ${t.kind}`,
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      items: { type: "array", items: { $ref: `#/components/schemas/${schemaName(t)}`, default: {} } },
      metadata: { allOf: [{ $ref: `#/components/schemas/${LIST_META}` }], default: {} },
    },
    "x-kubernetes-group-version-kind": [{ group: t.group, version: t.version, kind: t.listKind }],
  };
}

function queryParam(name: string, description: string, type = "string"): Record<string, unknown> {
  return { name, in: "query", description, schema: { type, uniqueItems: true } };
}

function operation(
  t: ResourceType,
  action: string,
  opId: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${action === "list" ? `${schemaName(t)}List` : schemaName(t)}` };
  return {
    operationId: opId,
    responses: {
      "200": {
        description: "OK",
        content: { "application/json": { schema: ref }, "application/yaml": { schema: ref } },
      },
    },
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": { group: t.group, version: t.version, kind: t.kind },
    ...extra,
  };
}

function pathsFor(t: ResourceType): Record<string, unknown> {
  const prefix = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const collection = t.namespaced ? `${prefix}/namespaces/{namespace}/${t.plural}` : `${prefix}/${t.plural}`;
  const opBase = `${
    t.group
      ? t.group
          .split(".")
          .map((s, i) => (i === 0 ? s : s[0]!.toUpperCase() + s.slice(1)))
          .join("")
      : "core"
  }${t.version[0]!.toUpperCase()}${t.version.slice(1)}${t.namespaced ? "Namespaced" : ""}${t.kind}`;
  const writeParams = [
    queryParam("dryRun", "When present, indicates that modifications should not be persisted."),
    queryParam(
      "fieldManager",
      "fieldManager is a name associated with the actor or entity that is making these changes.",
    ),
    queryParam(
      "fieldValidation",
      "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.",
    ),
  ];
  const patchTypes = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"];
  // Built-ins leave strategic merge out of the document so kubectl computes it from its own types.
  const patchContent = Object.fromEntries(
    patchTypes.map((ct) => [
      ct,
      { schema: { $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" } },
    ]),
  );
  const pathParams = [
    ...(t.namespaced
      ? [{ name: "namespace", in: "path", required: true, schema: { type: "string", uniqueItems: true } }]
      : []),
  ];
  const paths: Record<string, unknown> = {
    [collection]: {
      get: operation(t, "list", `list${opBase}`),
      post: operation(t, "post", `create${opBase}`, {
        parameters: writeParams,
        requestBody: {
          content: { "*/*": { schema: { $ref: `#/components/schemas/${schemaName(t)}` } } },
          required: true,
        },
      }),
      delete: operation(t, "deletecollection", `deletecollection${opBase}`),
      parameters: pathParams,
    },
    [`${collection}/{name}`]: {
      get: operation(t, "get", `read${opBase}`),
      put: operation(t, "put", `replace${opBase}`, {
        parameters: writeParams,
        requestBody: {
          content: { "*/*": { schema: { $ref: `#/components/schemas/${schemaName(t)}` } } },
          required: true,
        },
      }),
      patch: operation(t, "patch", `patch${opBase}`, {
        parameters: [...writeParams, queryParam("force", 'Force is going to "force" Apply requests.', "boolean")],
        requestBody: { content: patchContent, required: true },
      }),
      delete: operation(t, "delete", `delete${opBase}`),
      parameters: [
        { name: "name", in: "path", required: true, schema: { type: "string", uniqueItems: true } },
        ...pathParams,
      ],
    },
  };
  if (t.subresources.includes("status")) {
    paths[`${collection}/{name}/status`] = {
      get: operation(t, "get", `read${opBase}Status`),
      put: operation(t, "put", `replace${opBase}Status`, { parameters: writeParams }),
      patch: operation(t, "patch", `patch${opBase}Status`, {
        parameters: [...writeParams, queryParam("force", 'Force is going to "force" Apply requests.', "boolean")],
        requestBody: { content: patchContent, required: true },
      }),
      parameters: [
        { name: "name", in: "path", required: true, schema: { type: "string", uniqueItems: true } },
        ...pathParams,
      ],
    };
  }
  return paths;
}

export function groupVersionDocument(types: ResourceType[], group: string, version: string): Record<string, unknown> {
  const mine = types.filter((t) => t.group === group && t.version === version);
  const schemas: Record<string, unknown> = {
    [OBJECT_META]: objectMetaSchema,
    [LIST_META]: {
      description: "ListMeta describes metadata that synthetic resources must have.",
      type: "object",
      properties: {
        continue: { type: "string" },
        remainingItemCount: { type: "integer", format: "int64" },
        resourceVersion: { type: "string" },
      },
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch": {
      description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
      type: "object",
    },
  };
  let paths: Record<string, unknown> = {};
  for (const t of mine) {
    schemas[schemaName(t)] = kindSchema(t);
    schemas[`${schemaName(t)}List`] = listSchema(t);
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
