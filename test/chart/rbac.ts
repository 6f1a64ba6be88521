// The chart's RBAC as plain rules, and a comparison of those rules with the requests a client
// actually made (the API test server's request log): what was used but not granted, and what
// was granted but never used.
import type { RequestLogEntry } from "../../hack/apiserver/index.js";
import { renderChart, type KubeManifest } from "./helm.js";

export interface RbacRule {
  apiGroups: string[];
  /** "pods" or "pods/eviction" for a subresource. */
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
  /** cluster: a ClusterRole bound by a ClusterRoleBinding; namespace: a Role, or a ClusterRole bound by a RoleBinding. */
  scope: "cluster" | "namespace";
  /** The namespace a namespace-scoped rule applies in. */
  namespace?: string;
}

/** One request the rules do not allow, with how often it was made. */
export interface MissingGrant {
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
  count: number;
}

/** One grant (verb on a resource, in a scope) that no request used. */
export interface UnusedGrant {
  verb: string;
  apiGroup: string;
  resource: string;
  scope: "cluster" | "namespace";
  namespace?: string;
  resourceNames?: string[];
}

export interface RbacCheck {
  missing: MissingGrant[];
  unused: UnusedGrant[];
}

interface PolicyRuleManifest {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface BindingManifest extends KubeManifest {
  roleRef: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

/**
 * The rules granted to the operator's ServiceAccount by the rendered chart, each with the scope
 * its binding gives it. Roles and ClusterRoles that nothing binds grant nothing and are left out.
 */
export function rbacRulesFromChart(opts: { values?: string[]; namespace?: string } = {}): RbacRule[] {
  const namespace = opts.namespace ?? "healthprobe-system";
  return rbacRulesFromManifests(renderChart({ values: opts.values, namespace }), namespace);
}

export function rbacRulesFromManifests(docs: KubeManifest[], releaseNamespace: string): RbacRule[] {
  const sa = docs.find((d) => d.kind === "Deployment") as
    (KubeManifest & { spec: { template: { spec: { serviceAccountName?: string } } } }) | undefined;
  const saName = sa?.spec.template.spec.serviceAccountName ?? "default";
  const boundToOperator = (b: BindingManifest): boolean =>
    (b.subjects ?? []).some(
      (s) =>
        s.kind === "ServiceAccount" && s.name === saName && (s.namespace ?? b.metadata.namespace) === releaseNamespace,
    );

  const roles = new Map<string, PolicyRuleManifest[]>();
  for (const d of docs) {
    if (d.kind === "ClusterRole")
      roles.set(`ClusterRole/${d.metadata.name}`, (d.rules as PolicyRuleManifest[] | undefined) ?? []);
    if (d.kind === "Role")
      roles.set(
        `Role/${d.metadata.namespace ?? releaseNamespace}/${d.metadata.name}`,
        (d.rules as PolicyRuleManifest[] | undefined) ?? [],
      );
  }

  const out: RbacRule[] = [];
  for (const d of docs) {
    if (d.kind !== "ClusterRoleBinding" && d.kind !== "RoleBinding") continue;
    const b = d as BindingManifest;
    if (!boundToOperator(b)) continue;
    const bindingNs = b.metadata.namespace ?? releaseNamespace;
    const key =
      b.roleRef.kind === "ClusterRole" ? `ClusterRole/${b.roleRef.name}` : `Role/${bindingNs}/${b.roleRef.name}`;
    const rules = roles.get(key);
    if (!rules) throw new Error(`${d.kind} ${b.metadata.name} refers to ${key}, which the chart does not render`);
    const scope = d.kind === "ClusterRoleBinding" ? "cluster" : "namespace";
    for (const r of rules) {
      if (r.nonResourceURLs) throw new Error(`${key} grants nonResourceURLs, which the operator does not need`);
      out.push({
        apiGroups: r.apiGroups ?? [],
        resources: r.resources ?? [],
        verbs: r.verbs ?? [],
        ...(r.resourceNames && r.resourceNames.length > 0 ? { resourceNames: r.resourceNames } : {}),
        scope,
        ...(scope === "namespace" ? { namespace: bindingNs } : {}),
      });
    }
  }
  return out;
}

function resourceOf(e: RequestLogEntry): string {
  return e.subresource ? `${e.resource}/${e.subresource}` : e.resource;
}

function ruleAllows(rule: RbacRule, e: RequestLogEntry): boolean {
  if (!rule.apiGroups.includes(e.group)) return false;
  if (!rule.resources.includes(resourceOf(e))) return false;
  if (!rule.verbs.includes(e.verb)) return false;
  // As the real authorizer: a resourceNames rule never matches a request without a name (create, list, watch of a collection).
  if (rule.resourceNames && !rule.resourceNames.includes(e.name)) return false;
  if (rule.scope === "namespace" && e.namespace !== rule.namespace) return false;
  return true;
}

/**
 * Compares requests with rules. Non-resource requests (discovery, /version, /openapi) are
 * skipped: every authenticated user may make them through the built-in system:discovery role.
 * Pass the requests of one user, e.g. `requestsBy(log, { user: "operator" })`.
 */
export function checkRequestsAgainstRbac(entries: RequestLogEntry[], rules: RbacRule[]): RbacCheck {
  const missing = new Map<string, MissingGrant>();
  const used = new Set<string>();
  for (const e of entries) {
    if (!e.resource) continue;
    const allowing = rules.filter((r) => ruleAllows(r, e));
    if (allowing.length === 0) {
      const key = [e.verb, e.group, resourceOf(e), e.namespace, e.name].join("|");
      const m = missing.get(key);
      if (m) m.count++;
      else
        missing.set(key, {
          verb: e.verb,
          group: e.group,
          resource: resourceOf(e),
          namespace: e.namespace,
          name: e.name,
          count: 1,
        });
      continue;
    }
    for (const r of allowing) used.add(grantKey(r, e.verb, e.group, resourceOf(e)));
  }

  const unused: UnusedGrant[] = [];
  for (const r of rules) {
    for (const apiGroup of r.apiGroups) {
      for (const resource of r.resources) {
        for (const verb of r.verbs) {
          if (used.has(grantKey(r, verb, apiGroup, resource))) continue;
          unused.push({
            verb,
            apiGroup,
            resource,
            scope: r.scope,
            ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
            ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
          });
        }
      }
    }
  }
  return { missing: [...missing.values()], unused };
}

function grantKey(r: RbacRule, verb: string, group: string, resource: string): string {
  return [r.scope, r.namespace ?? "", (r.resourceNames ?? []).join(","), verb, group, resource].join("|");
}

/**
 * The sensitive verbs a scenario that uses every part of the operator's job must make it call
 * (the RBAC tests check it really did, so "nothing unused" is not won by a scenario that does little).
 */
export const EXERCISED_VERBS: readonly string[] = [
  "create pods/eviction",
  "delete pods",
  "get secrets",
  "patch events",
  "update leases",
  "update configmaps",
  "delete endpointslices",
  "patch pods/status",
  "get pods",
  "get pods/log",
  "list events",
  "create configmaps",
  "delete configmaps",
  "watch configmaps",
  "create tokenreviews",
  "create subjectaccessreviews",
];
