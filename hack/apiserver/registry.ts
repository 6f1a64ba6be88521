// Which resources are served: the built-in kinds plus those of established CRDs.
import { builtinResourceTypes, storageKey, type ResourceType } from "./resource-types.js";
import { crdResourceTypes } from "./crd-serving.js";
import type { KubeObject } from "./store.js";

export class ResourceRegistry {
  private builtins = builtinResourceTypes();
  private custom: ResourceType[] = [];

  all(): ResourceType[] {
    return [...this.builtins, ...this.custom];
  }

  /** Rebuilds the custom resource types from the current CRDs. */
  setCrds(crds: KubeObject[]): void {
    this.custom = crds.filter((c) => !c.metadata?.deletionTimestamp).flatMap((c) => crdResourceTypes(c));
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** Any served version of the resource; storage is version-agnostic. */
  findAnyVersion(group: string, plural: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.plural === plural);
  }

  findByKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    return this.all().find((t) => t.group === group && t.version === version && t.kind === kind);
  }

  byStorageKey(key: string): ResourceType | undefined {
    return this.all().find((t) => storageKey(t.group, t.plural) === key);
  }

  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const t of this.all()) seen.set(`${t.group}/${t.version}`, { group: t.group, version: t.version });
    return [...seen.values()];
  }
}
