// The pod writes that happen once per pod (the ReplicaSet's creates and deletes, the kubelet's
// status writes and final deletes), as plain JSON requests on one keep-alive pool.
import type { V1Pod } from "@kubernetes/client-node";
import type { RawJsonClient } from "./raw-json-client.js";

export interface PodRequests {
  create(namespace: string, pod: V1Pod): Promise<void>;
  /** The status subresource, with a full pod as the body. */
  putStatus(namespace: string, name: string, pod: V1Pod): Promise<void>;
  /** DeleteOptions go in the body, where they count; gracePeriodSeconds also in the query, where the request log shows it. */
  delete(
    namespace: string,
    name: string,
    options?: { gracePeriodSeconds?: number; preconditions?: { uid?: string } },
  ): Promise<void>;
}

const podsPath = (namespace: string): string => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
const podPath = (namespace: string, name: string): string => `${podsPath(namespace)}/${encodeURIComponent(name)}`;

/** Each throws with `code` = the HTTP status on an answer outside 2xx. */
export function podRequests(client: RawJsonClient): PodRequests {
  return {
    create: async (namespace, pod) => void (await client.request("POST", podsPath(namespace), pod)),
    putStatus: async (namespace, name, pod) =>
      void (await client.request("PUT", `${podPath(namespace, name)}/status`, pod)),
    delete: async (namespace, name, options) => {
      const query =
        options?.gracePeriodSeconds === undefined ? "" : `?gracePeriodSeconds=${options.gracePeriodSeconds}`;
      await client.request("DELETE", podPath(namespace, name) + query, options);
    },
  };
}
