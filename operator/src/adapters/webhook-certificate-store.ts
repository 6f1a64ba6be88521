// The webhook certificate's two homes in the API: the Secret (tls.crt, tls.key, ca.crt, and with
// a self-made CA its ca.key) in the operator's namespace, and the caBundle of the operator's own
// MutatingWebhookConfiguration. Writes carry the resourceVersion read, so two replicas never
// overwrite each other: a 409 surfaces as a StoreConflictError (re-read and decide again).
import type { KubeClient } from "./kube-client.js";
import { isAlreadyExists, isConflict, isNotFound } from "./kube-errors.js";
import { FIELD_MANAGER } from "./cluster-writer.js";

interface Secret {
  apiVersion?: string;
  kind?: string;
  type?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string };
  data?: Record<string, string>;
}
interface MutatingWebhookConfiguration {
  metadata?: { name?: string; resourceVersion?: string };
  webhooks?: Array<{ clientConfig: { caBundle?: string } }>;
}

export class StoreConflictError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = "StoreConflictError";
  }
}

export interface CertificateSecret {
  resourceVersion: string;
  /** Decoded values by key. */
  data: Record<string, string>;
}

export interface WebhookCertificateStore {
  readSecret(): Promise<CertificateSecret | undefined>;
  /** Creates the Secret, or updates it at the given resourceVersion. */
  writeSecret(data: Record<string, string>, resourceVersion: string | undefined): Promise<CertificateSecret>;
  /** Sets every webhook's caBundle to this PEM bundle: "missing" when the configuration does not exist. */
  setCaBundle(pem: string): Promise<"unchanged" | "updated" | "missing">;
}

function decode(secret: Secret): CertificateSecret {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) data[k] = Buffer.from(v, "base64").toString("utf8");
  return { resourceVersion: secret.metadata?.resourceVersion ?? "", data };
}

export function kubeWebhookCertificateStore(
  client: KubeClient,
  where: { namespace: string; secretName: string; configurationName: string },
): WebhookCertificateStore {
  const { namespace, secretName: name, configurationName } = where;
  const secrets = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const configurationPath = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(configurationName)}`;
  const manager = { fieldManager: FIELD_MANAGER };
  const secretRef = `Secret ${namespace}/${name}`;
  return {
    async readSecret() {
      try {
        return decode(await client.get<Secret>(`${secrets}/${encodeURIComponent(name)}`));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new Error(`reading ${secretRef}`, { cause: err });
      }
    },
    async writeSecret(values, resourceVersion) {
      const body: Secret = {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/tls",
        metadata: {
          name,
          namespace,
          labels: { "app.kubernetes.io/managed-by": "healthprobe-operator" },
          ...(resourceVersion ? { resourceVersion } : {}),
        },
        data: Object.fromEntries(
          Object.entries(values).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
        ),
      };
      try {
        const written = resourceVersion
          ? await client.put<Secret>(`${secrets}/${encodeURIComponent(name)}`, body, manager)
          : await client.post<Secret>(secrets, body, manager);
        return decode(written);
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err))
          throw new StoreConflictError(`writing ${secretRef}: another replica wrote it first`, { cause: err });
        throw new Error(`${resourceVersion ? "updating" : "creating"} ${secretRef}`, { cause: err });
      }
    },
    async setCaBundle(pem) {
      const ref = `MutatingWebhookConfiguration ${configurationName}`;
      let config: MutatingWebhookConfiguration;
      try {
        config = await client.get<MutatingWebhookConfiguration>(configurationPath);
      } catch (err) {
        if (isNotFound(err)) return "missing";
        throw new Error(`reading ${ref}`, { cause: err });
      }
      const caBundle = Buffer.from(pem, "utf8").toString("base64");
      const webhooks = config.webhooks ?? [];
      if (webhooks.every((w) => w.clientConfig.caBundle === caBundle)) return "unchanged";
      for (const w of webhooks) w.clientConfig.caBundle = caBundle;
      try {
        // A full update at the resourceVersion read: a concurrent edit is a 409, never lost.
        await client.put(configurationPath, config, manager);
        return "updated";
      } catch (err) {
        if (isConflict(err)) throw new StoreConflictError(`updating ${ref}: changed since it was read`, { cause: err });
        throw new Error(`updating the caBundle of ${ref}`, { cause: err });
      }
    },
  };
}
