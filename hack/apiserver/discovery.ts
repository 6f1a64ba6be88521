// Discovery documents: /api, /apis and per group-version resource lists. Aggregated discovery (v2) is
// not served: kubectl and helm fall back to these, as with any server without it.
import { apiVersionOf, type ResourceType } from "./resource-types.js";

function groupVersions(types: ResourceType[], group: string): string[] {
  const versions: string[] = [];
  for (const t of types) if (t.group === group && !versions.includes(t.version)) versions.push(t.version);
  // Preferred first: the highest stable version, like v1 over v1beta1 over v1alpha1.
  return versions.sort((a, b) => versionPriority(b) - versionPriority(a));
}

function versionPriority(v: string): number {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return 0;
  const major = Number(m[1]);
  const stage = m[2] === "alpha" ? 1 : m[2] === "beta" ? 2 : 3;
  return stage * 1_000_000 + major * 1000 + Number(m[3] ?? 0);
}

function groups(types: ResourceType[]): string[] {
  const out: string[] = [];
  for (const t of types) if (t.group !== "" && !out.includes(t.group)) out.push(t.group);
  return out;
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

export function apiGroupList(types: ResourceType[]): Record<string, unknown> {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: groups(types).map((g) => {
      const versions = groupVersions(types, g).map((v) => ({ groupVersion: `${g}/${v}`, version: v }));
      return { name: g, versions, preferredVersion: versions[0] };
    }),
  };
}

export function apiGroup(types: ResourceType[], group: string): Record<string, unknown> | undefined {
  const versions = groupVersions(types, group).map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  if (versions.length === 0) return undefined;
  return { kind: "APIGroup", apiVersion: "v1", name: group, versions, preferredVersion: versions[0] };
}

function subresourceVerbs(sub: string): string[] {
  if (sub === "eviction") return ["create"];
  if (sub === "finalize") return ["update"];
  return ["get", "patch", "update"];
}

function subresourceKind(t: ResourceType, sub: string): { group: string; version: string; kind: string } {
  if (sub === "eviction") return { group: "policy", version: "v1", kind: "Eviction" };
  return { group: t.group, version: t.version, kind: t.kind };
}

export function apiResourceList(
  types: ResourceType[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const mine = types.filter((t) => t.group === group && t.version === version);
  if (mine.length === 0) return undefined;
  const resources: Array<Record<string, unknown>> = [];
  for (const t of mine) {
    const r: Record<string, unknown> = {
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: t.verbs,
    };
    if (t.shortNames.length) r.shortNames = t.shortNames;
    if (t.categories.length) r.categories = t.categories;
    resources.push(r);
    for (const sub of t.subresources) {
      const k = subresourceKind(t, sub);
      const s: Record<string, unknown> = {
        name: `${t.plural}/${sub}`,
        singularName: "",
        namespaced: t.namespaced,
        kind: k.kind,
        verbs: subresourceVerbs(sub),
      };
      if (k.group !== t.group || k.version !== t.version) {
        s.group = k.group;
        s.version = k.version;
      }
      resources.push(s);
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: apiVersionOf({ group, version }), resources };
}
