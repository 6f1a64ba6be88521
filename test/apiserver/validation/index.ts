// Validation of the built-in kinds the operator writes (EndpointSlices, Events, Leases, ConfigMaps,
// Secrets, pod status), as the real API server applies it after defaulting; every other built-in kind
// gets the generic metadata checks only (kube-apiserver is the reference for the rest).
// Each kind's rules live in their own file, with the upstream source named at its top.
import { dedupe } from "./field-errors.js";
import { validateConfigMap, validateSecret } from "./config-data.js";
import { validateEndpointSlice } from "./endpoint-slice.js";
import { validateEvent } from "./event.js";
import { validateLease } from "./lease.js";
import { nameIsPathSegment } from "./names.js";
import { asObj, validateObjectMeta, validateObjectMetaUpdate, type Obj } from "./object-meta.js";
import { validatePodStatus } from "./pod.js";

export interface FieldCause {
  /** JSON path of the field, e.g. "metadata.labels" or "endpoints[3].addresses[0]". */
  field: string;
  message: string;
  /** metav1 StatusCause reason, e.g. "FieldValueInvalid", "FieldValueRequired", "FieldValueTooLong", "FieldValueForbidden", "FieldValueNotSupported", "FieldValueDuplicate", "FieldValueTooMany". */
  reason: string;
}

export interface BuiltinValidationOptions {
  /**
   * Accept loopback EndpointSlice addresses (127.0.0.0/8, ::1), which the real server rejects.
   * Off by default; an explicit choice for a test topology whose pods live on loopback.
   */
  allowLoopbackEndpointAddresses?: boolean;
}

const CLUSTER_SCOPED = new Set([
  "/Namespace",
  "/Node",
  "/PersistentVolume",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
]);

function validateKind(
  gvk: { group: string; version: string; kind: string },
  obj: Obj,
  old: Obj | undefined,
  subresource: string,
  opts: BuiltinValidationOptions,
) {
  switch (`${gvk.group}/${gvk.kind}`) {
    case "discovery.k8s.io/EndpointSlice":
      return validateEndpointSlice(obj, old, { allowLoopbackAddresses: opts.allowLoopbackEndpointAddresses });
    case "coordination.k8s.io/Lease":
      return validateLease(obj, old);
    case "/Event":
      return validateEvent(obj, old, false);
    case "events.k8s.io/Event":
      return validateEvent(obj, old, true);
    case "/Pod":
      return subresource === "status" && old ? validatePodStatus(obj, old) : undefined;
    case "/ConfigMap":
      return validateConfigMap(obj, old);
    case "/Secret":
      return validateSecret(obj, old);
    default:
      return undefined;
  }
}

/**
 * Validates an object of a built-in kind on create (old undefined) or update.
 * Kinds without rules here get the generic metadata checks every resource gets
 * (rest.BeforeCreate / BeforeUpdate: path-segment names, labels, annotations, owners, finalizers).
 * @param gvk e.g. { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice" } (core group is "")
 * @param subresource "" for the main resource, "status" for the status subresource
 */
export function validateBuiltin(
  gvk: { group: string; version: string; kind: string },
  obj: Record<string, unknown>,
  old: Record<string, unknown> | undefined,
  subresource: string,
  opts: BuiltinValidationOptions = {},
): FieldCause[] {
  const specific = validateKind(gvk, obj, old, subresource, opts) ?? [];
  const namespaced = !CLUSTER_SCOPED.has(`${gvk.group}/${gvk.kind}`);
  const meta = asObj(obj.metadata);
  // The generic metadata checks run after the kind's own on create, and alongside them on update.
  const generic = old
    ? [
        ...validateObjectMeta(meta, { namespaced, nameFn: nameIsPathSegment }),
        ...validateObjectMetaUpdate(meta, asObj(old.metadata), {}),
      ]
    : specific.length === 0
      ? validateObjectMeta(meta, { namespaced, nameFn: nameIsPathSegment })
      : [];
  return dedupe([...specific, ...generic]);
}
