// The webhook certificate's two homes in the API: the Secret (tls.crt, tls.key, ca.crt, and with
// a self-made CA its ca.key) in the operator's namespace, and the caBundle of the operator's own
// MutatingWebhookConfiguration. Writes carry the resourceVersion read, so two replicas never
// overwrite each other: a 409 surfaces as a StoreConflictError (re-read and decide again).
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig, type V1MutatingWebhookConfiguration, type V1Secret } from "@kubernetes/client-node";
import { isAlreadyExists, isConflict, isNotFound } from "./kube-errors.js";
import { FIELD_MANAGER } from "./cluster-writer.js";

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

function decode(secret: V1Secret): CertificateSecret {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) data[k] = Buffer.from(v, "base64").toString("utf8");
  return { resourceVersion: secret.metadata?.resourceVersion ?? "", data };
}

export function kubeWebhookCertificateStore(kc: KubeConfig, where: { namespace: string; secretName: string; configurationName: string }): WebhookCertificateStore {
  const core = kc.makeApiClient(CoreV1Api);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const { namespace, secretName: name, configurationName } = where;
  const secretRef = `Secret ${namespace}/${name}`;
  return {
    async readSecret() {
      try {
        return decode(await core.readNamespacedSecret({ name, namespace }));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new Error(`reading ${secretRef}`, { cause: err });
      }
    },
    async writeSecret(values, resourceVersion) {
      const body: V1Secret = {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/tls",
        metadata: { name, namespace, labels: { "app.kubernetes.io/managed-by": "healthprobe-operator" }, ...(resourceVersion ? { resourceVersion } : {}) },
        data: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")])),
      };
      try {
        const written = resourceVersion
          ? await core.replaceNamespacedSecret({ name, namespace, body, fieldManager: FIELD_MANAGER })
          : await core.createNamespacedSecret({ namespace, body, fieldManager: FIELD_MANAGER });
        return decode(written);
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err)) throw new StoreConflictError(`writing ${secretRef}: another replica wrote it first`, { cause: err });
        throw new Error(`${resourceVersion ? "updating" : "creating"} ${secretRef}`, { cause: err });
      }
    },
    async setCaBundle(pem) {
      const ref = `MutatingWebhookConfiguration ${configurationName}`;
      let config: V1MutatingWebhookConfiguration;
      try {
        config = await admission.readMutatingWebhookConfiguration({ name: configurationName });
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
        await admission.replaceMutatingWebhookConfiguration({ name: configurationName, body: config, fieldManager: FIELD_MANAGER });
        return "updated";
      } catch (err) {
        if (isConflict(err)) throw new StoreConflictError(`updating ${ref}: changed since it was read`, { cause: err });
        throw new Error(`updating the caBundle of ${ref}`, { cause: err });
      }
    },
  };
}
