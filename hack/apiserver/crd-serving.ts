// Turns a CustomResourceDefinition into served resource types (one per served version).
import { ALL_VERBS, type ResourceType } from "./resource-types.js";
import type { Schema } from "./crd-schema.js";
import type { KubeObject } from "./store.js";

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

export interface CrdServing {
  crdName: string;
  schema: Schema | undefined;
  printerColumns: PrinterColumn[];
  storageVersion: string;
}

export function crdResourceTypes(crd: KubeObject): ResourceType[] {
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  const versions = (spec.versions ?? []) as Array<Record<string, any>>;
  const storage = versions.find((v) => v.storage)?.name ?? versions[0]?.name ?? "v1";
  return versions
    .filter((v) => v.served !== false)
    .map((v) => {
      const subresources: string[] = [];
      if (v.subresources?.status !== undefined) subresources.push("status");
      return {
        group: spec.group as string,
        version: v.name as string,
        kind: names.kind as string,
        listKind: (names.listKind as string) ?? `${names.kind}List`,
        plural: names.plural as string,
        singular: (names.singular as string) ?? String(names.kind).toLowerCase(),
        shortNames: (names.shortNames as string[]) ?? [],
        categories: (names.categories as string[]) ?? [],
        namespaced: spec.scope !== "Cluster",
        verbs: ALL_VERBS,
        subresources,
        fieldLabels: [],
        crd: {
          crdName: crd.metadata.name as string,
          schema: v.schema?.openAPIV3Schema as Schema | undefined,
          printerColumns: (v.additionalPrinterColumns ?? []) as PrinterColumn[],
          storageVersion: storage,
        },
      } satisfies ResourceType;
    });
}

/** The status the real apiextensions controllers give an accepted CRD. */
export function establishedCrdStatus(crd: KubeObject, now: string): Record<string, unknown> {
  const versions = (crd.spec?.versions ?? []) as Array<Record<string, any>>;
  const storage = versions.find((v) => v.storage)?.name ?? versions[0]?.name;
  const stored = new Set<string>((crd.status?.storedVersions as string[]) ?? []);
  if (storage) stored.add(storage);
  const names = crd.spec?.names ?? {};
  return {
    acceptedNames: {
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      plural: names.plural,
      singular: names.singular ?? String(names.kind ?? "").toLowerCase(),
      ...(names.shortNames ? { shortNames: names.shortNames } : {}),
      ...(names.categories ? { categories: names.categories } : {}),
    },
    conditions: [
      {
        type: "NamesAccepted",
        status: "True",
        lastTransitionTime: now,
        reason: "NoConflicts",
        message: "no conflicts found",
      },
      {
        type: "Established",
        status: "True",
        lastTransitionTime: now,
        reason: "InitialNamesAccepted",
        message: "the initial names have been accepted",
      },
    ],
    storedVersions: [...stored],
  };
}
