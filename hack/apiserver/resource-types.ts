// The kinds the server knows: names, scope, verbs and subresources as discovery shows them.
import type { CrdServing } from "./crd-serving.js";

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  verbs: string[];
  /** Subresources served, e.g. ["status", "eviction"]. */
  subresources: string[];
  /** Field selector labels accepted beyond metadata.name / metadata.namespace. */
  fieldLabels: string[];
  /** Built-ins: the fields an object may carry at its top level (strict field validation checks them). */
  topLevelFields?: string[];
  /** Custom resources: schema, validation rules and printer columns of the served version. */
  crd?: CrdServing;
}

export const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/**
 * Resources kept in another's storage, as the real storage factory's cohabitating resources:
 * events.k8s.io Events are core Events (converted on read and write, see event-conversion.ts).
 */
const COHABITING: Record<string, string> = { "events.k8s.io/events": "/events" };

/** Storage identity of a resource: one store per group and plural, whatever the version. */
export function storageKey(group: string, plural: string): string {
  const key = `${group}/${plural}`;
  return COHABITING[key] ?? key;
}

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

export function hasStatus(t: ResourceType): boolean {
  return t.subresources.includes("status");
}

function builtin(
  group: string,
  version: string,
  kind: string,
  plural: string,
  opts: {
    namespaced?: boolean;
    shortNames?: string[];
    categories?: string[];
    subresources?: string[];
    fieldLabels?: string[];
    verbs?: string[];
    fields?: string[];
  } = {},
): ResourceType {
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    shortNames: opts.shortNames ?? [],
    categories: opts.categories ?? [],
    namespaced: opts.namespaced ?? true,
    verbs: opts.verbs ?? ALL_VERBS,
    subresources: opts.subresources ?? [],
    fieldLabels: opts.fieldLabels ?? [],
    topLevelFields: ["apiVersion", "kind", "metadata", ...(opts.fields ?? ["spec", "status"])],
  };
}

const EVENT_FIELDS = [
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type",
];

const CORE_EVENT_FIELDS = [
  "involvedObject",
  "reason",
  "message",
  "source",
  "firstTimestamp",
  "lastTimestamp",
  "count",
  "type",
  "eventTime",
  "series",
  "action",
  "related",
  "reportingComponent",
  "reportingInstance",
];

const EVENTS_V1_FIELDS = [
  "eventTime",
  "series",
  "reportingController",
  "reportingInstance",
  "action",
  "reason",
  "regarding",
  "related",
  "note",
  "type",
  "deprecatedSource",
  "deprecatedFirstTimestamp",
  "deprecatedLastTimestamp",
  "deprecatedCount",
];

export function builtinResourceTypes(): ResourceType[] {
  return [
    builtin("", "v1", "Namespace", "namespaces", {
      namespaced: false,
      shortNames: ["ns"],
      subresources: ["status", "finalize"],
      fieldLabels: ["status.phase"],
      verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    }),
    builtin("", "v1", "Pod", "pods", {
      shortNames: ["po"],
      categories: ["all"],
      subresources: ["status", "eviction", "log"],
      fieldLabels: [
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
      ],
    }),
    builtin("", "v1", "Service", "services", {
      shortNames: ["svc"],
      categories: ["all"],
      subresources: ["status"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    }),
    builtin("", "v1", "ConfigMap", "configmaps", { shortNames: ["cm"], fields: ["data", "binaryData", "immutable"] }),
    builtin("", "v1", "Secret", "secrets", {
      fieldLabels: ["type"],
      fields: ["data", "stringData", "type", "immutable"],
    }),
    builtin("", "v1", "ServiceAccount", "serviceaccounts", {
      shortNames: ["sa"],
      fields: ["secrets", "imagePullSecrets", "automountServiceAccountToken"],
    }),
    builtin("", "v1", "Event", "events", { shortNames: ["ev"], fieldLabels: EVENT_FIELDS, fields: CORE_EVENT_FIELDS }),
    builtin("", "v1", "Node", "nodes", {
      namespaced: false,
      shortNames: ["no"],
      subresources: ["status"],
      fieldLabels: ["spec.unschedulable"],
    }),
    builtin("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", {
      fieldLabels: ["addressType"],
      fields: ["addressType", "endpoints", "ports"],
    }),
    builtin("events.k8s.io", "v1", "Event", "events", {
      shortNames: ["ev"],
      fieldLabels: [
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "reason",
        "reportingController",
        "type",
      ],
      fields: EVENTS_V1_FIELDS,
    }),
    builtin("coordination.k8s.io", "v1", "Lease", "leases"),
    builtin("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", {
      namespaced: false,
      fields: ["webhooks"],
    }),
    builtin("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", {
      shortNames: ["pdb"],
      subresources: ["status"],
    }),
    builtin("apps", "v1", "ReplicaSet", "replicasets", {
      shortNames: ["rs"],
      categories: ["all"],
      subresources: ["status"],
      fieldLabels: ["status.replicas"],
    }),
    builtin("apps", "v1", "Deployment", "deployments", {
      shortNames: ["deploy"],
      categories: ["all"],
      subresources: ["status"],
    }),
    builtin("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", {
      namespaced: false,
      shortNames: ["crd", "crds"],
      categories: ["api-extensions"],
      subresources: ["status"],
    }),
    builtin("rbac.authorization.k8s.io", "v1", "Role", "roles", { fields: ["rules"] }),
    builtin("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", { fields: ["subjects", "roleRef"] }),
    builtin("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", {
      namespaced: false,
      fields: ["rules", "aggregationRule"],
    }),
    builtin("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", {
      namespaced: false,
      fields: ["subjects", "roleRef"],
    }),
  ];
}
