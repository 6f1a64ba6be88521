// TokenReview and SubjectAccessReview, as kube-apiserver answers them, over this server's users
// and its stored RBAC objects.
//
// Authentication here: a bearer token is the user's name (see kubeconfig.ts). A token of the form
// system:serviceaccount:<namespace>:<name> stands for that ServiceAccount's token and authenticates
// only while the ServiceAccount exists (a deleted ServiceAccount's tokens stop working, as bound
// tokens do). "admin" is in system:masters, as a kubeadm admin is.
//
// Authorisation: the RBAC authoriser's rules, read from stored ClusterRoles, ClusterRoleBindings,
// Roles and RoleBindings: subjects (User, Group, ServiceAccount), verbs, apiGroups, resources
// (with subresources), resourceNames and nonResourceURLs (exact, or a prefix ending in "*").
// system:masters may do anything. Aggregated ClusterRoles count with the rules they hold.
import { ApiError } from "./errors.js";
import { storageKey } from "./resource-types.js";
import type { KubeObject, Store } from "./store.js";

interface UserInfo {
  username: string;
  groups: string[];
}

const SA_PREFIX = "system:serviceaccount:";

/** The user a token authenticates as, or undefined when the token authenticates nobody. */
export function authenticateToken(store: Store, token: string): UserInfo | undefined {
  if (token === "" || /\s/.test(token) || token === "system:anonymous") return undefined;
  if (token.startsWith(SA_PREFIX)) {
    const [namespace, name, ...rest] = token.slice(SA_PREFIX.length).split(":");
    if (!namespace || !name || rest.length > 0) return undefined;
    if (!store.get(storageKey("", "serviceaccounts"), namespace, name)) return undefined;
    return {
      username: token,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
    };
  }
  return {
    username: token,
    groups: token === "admin" ? ["system:masters", "system:authenticated"] : ["system:authenticated"],
  };
}

export function tokenReview(store: Store, body: unknown): KubeObject {
  const token = (body as { spec?: { token?: unknown } })?.spec?.token;
  if (typeof token !== "string" || token === "")
    throw new ApiError(422, "Invalid", 'TokenReview.authentication.k8s.io "" is invalid: spec.token: Required value');
  const user = authenticateToken(store, token);
  const status = user
    ? { authenticated: true, user: { username: user.username, groups: user.groups }, audiences: [] }
    : { authenticated: false, error: "invalid bearer token" };
  return {
    kind: "TokenReview",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { creationTimestamp: null },
    spec: { token },
    status,
  };
}

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

interface Rule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

type Attributes = { nonResource: { path: string; verb: string } } | { resource: ResourceAttributes };

function matchesSubject(subject: KubeObject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  switch (subject.kind) {
    case "User":
      return subject.name === user.username;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount":
      return `${SA_PREFIX}${subject.namespace ?? bindingNamespace ?? ""}:${subject.name}` === user.username;
    default:
      return false;
  }
}

function ruleAllows(rule: Rule, attrs: Attributes): boolean {
  const has = (list: string[] | undefined, value: string) => (list ?? []).some((v) => v === "*" || v === value);
  if ("nonResource" in attrs) {
    const { path, verb } = attrs.nonResource;
    const urls = rule.nonResourceURLs ?? [];
    return (
      has(rule.verbs, verb) &&
      urls.some((u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.slice(0, -1))))
    );
  }
  const r = attrs.resource;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : (r.resource ?? "");
  if ((rule.nonResourceURLs ?? []).length > 0 && (rule.resources ?? []).length === 0) return false;
  if (!has(rule.verbs, r.verb ?? "") || !has(rule.apiGroups, r.group ?? "") || !has(rule.resources, resource))
    return false;
  return (rule.resourceNames ?? []).length === 0 || (r.name !== undefined && rule.resourceNames!.includes(r.name));
}

function rulesOf(store: Store, roleRef: KubeObject, namespace: string | undefined): Rule[] {
  if (roleRef?.kind === "ClusterRole")
    return store.get(storageKey("rbac.authorization.k8s.io", "clusterroles"), undefined, roleRef.name)?.rules ?? [];
  if (roleRef?.kind === "Role" && namespace)
    return store.get(storageKey("rbac.authorization.k8s.io", "roles"), namespace, roleRef.name)?.rules ?? [];
  return [];
}

/** Whether RBAC allows the user the attributes, and the reason kube-apiserver gives. */
export function authorize(store: Store, user: UserInfo, attrs: Attributes): { allowed: boolean; reason: string } {
  if (user.groups.includes("system:masters")) return { allowed: true, reason: "" };
  const bindings: Array<{ binding: KubeObject; namespace: string | undefined }> = store
    .list(storageKey("rbac.authorization.k8s.io", "clusterrolebindings"))
    .map((binding) => ({ binding, namespace: undefined }));
  const ns = "resource" in attrs ? attrs.resource.namespace : undefined;
  if (ns)
    for (const binding of store.list(storageKey("rbac.authorization.k8s.io", "rolebindings"), ns))
      bindings.push({ binding, namespace: ns });
  for (const { binding, namespace } of bindings) {
    if (
      !(binding.subjects ?? []).some((s: KubeObject) =>
        matchesSubject(s, user, namespace ?? binding.metadata?.namespace),
      )
    )
      continue;
    if (rulesOf(store, binding.roleRef, namespace).some((rule) => ruleAllows(rule, attrs))) {
      const kind = namespace ? "RoleBinding" : "ClusterRoleBinding";
      return {
        allowed: true,
        reason: `RBAC: allowed by ${kind} "${binding.metadata?.name}" of ${binding.roleRef?.kind} "${binding.roleRef?.name}" to User "${user.username}"`,
      };
    }
  }
  return { allowed: false, reason: "" };
}

export function subjectAccessReview(store: Store, body: unknown): KubeObject {
  const spec = (body as { spec?: Record<string, any> })?.spec ?? {};
  if (typeof spec.user !== "string" && !Array.isArray(spec.groups))
    throw new ApiError(
      422,
      "Invalid",
      'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
    );
  const na = spec.nonResourceAttributes;
  const ra = spec.resourceAttributes;
  if (!na === !ra)
    throw new ApiError(
      422,
      "Invalid",
      'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  const attrs: Attributes = na
    ? { nonResource: { path: String(na.path ?? ""), verb: String(na.verb ?? "") } }
    : { resource: ra as ResourceAttributes };
  const { allowed, reason } = authorize(store, { username: spec.user ?? "", groups: spec.groups ?? [] }, attrs);
  return {
    kind: "SubjectAccessReview",
    apiVersion: "authorization.k8s.io/v1",
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed, ...(reason ? { reason } : {}) },
  };
}
