// Kubernetes objects as the tests and the demo handle them, and the CRD they install: shared by
// the integration tests and hack/demo.
import { readFileSync } from "node:fs";
import { loadYaml, type KubernetesObject, type KubernetesObjectApi } from "@kubernetes/client-node";
import { waitFor } from "./wait-for.js";

export type Obj = KubernetesObject & Record<string, any>;

/**
 * The committed CRD, ready to create through client-node. It is loaded with client-node's own
 * loadYaml into its typed model: KubernetesObjectApi serializes a known kind through that
 * model, and a plain object would lose every schema `default` on the way (the model calls the
 * field `_default`), leaving the server with a CRD that defaults nothing.
 */
export function loadCrd(): Obj {
  return loadYaml(
    readFileSync(new URL("../../crds/healthprobe.io_healthprobepolicies.yaml", import.meta.url), "utf8"),
  ) as Obj;
}

/** Creates the CRD and waits until HealthProbePolicies are served. */
export async function installCrd(api: KubernetesObjectApi): Promise<void> {
  await api.create(loadCrd());
  await waitFor(() => api.list("healthprobe.io/v1alpha1", "HealthProbePolicy").then(() => true), {
    what: "the HealthProbePolicy CRD to be served",
  });
}

/** Endpoint readiness by pod name across these EndpointSlices. */
export function readinessOf(slices: readonly Obj[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const s of slices)
    for (const e of s.endpoints ?? []) if (e.targetRef?.name) out.set(e.targetRef.name, e.conditions?.ready === true);
  return out;
}

/** Objects through client-node as plain JSON, `namespace` where none is given; a missing one reads as undefined. */
export function objectClient(api: KubernetesObjectApi, namespace: string) {
  return {
    create: async (obj: Obj) => (await api.create(obj)) as Obj,
    get: async (apiVersion: string, kind: string, name: string, ns = namespace): Promise<Obj | undefined> => {
      try {
        return (await api.read({ apiVersion, kind, metadata: { name, namespace: ns } })) as Obj;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    },
    list: async (apiVersion: string, kind: string, ns = namespace, labelSelector?: string) =>
      ((await api.list(apiVersion, kind, ns, undefined, undefined, undefined, undefined, labelSelector)).items ??
        []) as Obj[],
    patch: async (obj: Obj) =>
      (await api.patch(obj, undefined, undefined, "test", undefined, "application/merge-patch+json")) as Obj,
    remove: async (apiVersion: string, kind: string, name: string, ns = namespace): Promise<void> => {
      try {
        await api.delete({ apiVersion, kind, metadata: { name, namespace: ns } });
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err;
      }
    },
  };
}
