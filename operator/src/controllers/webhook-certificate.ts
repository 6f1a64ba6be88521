// Keeps the webhook's serving certificate: every replica runs it (every replica serves the
// webhook, so every replica must serve a certificate the caBundle trusts).
//
// One pass: read the Secret; when the operator manages the certificate, decide with
// planCertificate whether to make a new CA or serving certificate, write the Secret
// (create when absent, else update at the resourceVersion read: a 409 means another replica
// wrote first, so read again); load what the Secret holds into the HTTPS server when it changed;
// keep the webhook configuration's caBundle equal to the Secret's ca.crt. The next pass is due at
// the renewal time, and at least every resyncMs so a certificate another replica or cert-manager
// wrote is picked up.
import {
  certificateFacts,
  issueServingCertificate,
  makeCertificateAuthority,
  splitPemBundle,
  verifiesAgainst,
  type KeyPairPem,
} from "../runtime/certificates.js";
import { planCertificate, type CertificateState } from "../domain/webhook-certificate-plan.js";
import {
  StoreConflictError,
  type CertificateSecret,
  type WebhookCertificateStore,
} from "../adapters/webhook-certificate-store.js";
import type { Clock } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import type { ReconcileResult } from "../runtime/work-queue.js";

export const TLS_CERT = "tls.crt";
export const TLS_KEY = "tls.key";
export const CA_CERT = "ca.crt";
export const CA_KEY = "ca.key";

export interface WebhookCertificateOptions {
  store: WebhookCertificateStore;
  /** DNS names and IP addresses the serving certificate must name. */
  hosts: string[];
  /** False: only read the Secret (cert-manager writes it and injects the caBundle). */
  manage: boolean;
  /** Whether to keep the caBundle of the webhook configuration. */
  keepCaBundle: boolean;
  /** Called with a certificate to serve, whenever it differs from the last one. */
  serve: (pair: KeyPairPem) => void;
  clock: Clock;
  logger: Logger;
  caLifetimeMs?: number;
  leafLifetimeMs?: number;
  resyncMs?: number;
}

const DAY = 86_400_000;
/** How soon a pass runs again after a conflict or with no certificate to serve yet. */
const RETRY_MS = 1_000;

export class WebhookCertificate {
  private served: string | undefined;
  private readonly caLifetimeMs: number;
  private readonly leafLifetimeMs: number;
  private readonly resyncMs: number;

  constructor(private readonly o: WebhookCertificateOptions) {
    this.caLifetimeMs = o.caLifetimeMs ?? 3650 * DAY;
    this.leafLifetimeMs = o.leafLifetimeMs ?? 365 * DAY;
    this.resyncMs = o.resyncMs ?? 60_000;
  }

  /** Whether a certificate is loaded into the server. */
  hasCertificate(): boolean {
    return this.served !== undefined;
  }

  async reconcile(): Promise<ReconcileResult> {
    const secret = await this.o.store.readSecret();
    let delay = this.resyncMs;
    let current = secret;
    if (this.o.manage) {
      const outcome = await this.renewIfDue(secret);
      if (outcome === "conflict") return { requeueAfterMs: RETRY_MS };
      current = outcome.secret;
      delay = Math.min(delay, Math.max(0, outcome.renewAt - this.o.clock.now()));
    }
    const data = current?.data ?? {};
    const cert = data[TLS_CERT];
    const key = data[TLS_KEY];
    if (!cert || !key) {
      this.o.logger.warn(
        { secret: "webhook certificate" },
        "the webhook certificate Secret has no tls.crt and tls.key yet; the webhook cannot serve",
      );
      return { requeueAfterMs: Math.min(delay, 10_000) };
    }
    if (this.served !== cert) {
      this.o.serve({ cert, key });
      this.served = cert;
      this.o.logger.info(
        { notAfter: new Date(certificateFacts(cert).notAfter).toISOString() },
        "webhook serving certificate loaded",
      );
    }
    if (this.o.manage && this.o.keepCaBundle && data[CA_CERT]) {
      try {
        const result = await this.o.store.setCaBundle(data[CA_CERT]);
        if (result === "updated") this.o.logger.info("webhook configuration caBundle updated");
        if (result === "missing")
          this.o.logger.warn("the MutatingWebhookConfiguration does not exist; its caBundle is set once it does");
      } catch (err) {
        if (err instanceof StoreConflictError) return { requeueAfterMs: RETRY_MS };
        throw err;
      }
    }
    return { requeueAfterMs: delay };
  }

  /** The Secret as it is, or as this pass rewrote it, and when to look again. */
  private async renewIfDue(
    secret: CertificateSecret | undefined,
  ): Promise<{ secret: CertificateSecret | undefined; renewAt: number } | "conflict"> {
    const now = this.o.clock.now();
    const data = secret?.data ?? {};
    const plan = planCertificate(stateOf(data), this.o.hosts, now);
    if (plan.action === "keep") return { secret, renewAt: plan.renewAt };
    const next: Record<string, string> = { ...data };
    let ca: KeyPairPem;
    if (plan.action === "new-ca") {
      ca = await makeCertificateAuthority("healthprobe-operator webhook CA", { now, lifetimeMs: this.caLifetimeMs });
      // Older CAs stay trusted until they expire, so a replica still serving a certificate they signed keeps working.
      const older = splitPemBundle(data[CA_CERT] ?? "").filter((pem) => (safeFacts(pem)?.notAfter ?? 0) > now);
      next[CA_CERT] = [ca.cert.trim(), ...older].join("\n") + "\n";
      next[CA_KEY] = ca.key;
    } else {
      ca = { cert: splitPemBundle(data[CA_CERT] ?? "")[0]!, key: data[CA_KEY]! };
    }
    const leaf = await issueServingCertificate(ca, this.o.hosts, { now, lifetimeMs: this.leafLifetimeMs });
    next[TLS_CERT] = leaf.cert;
    next[TLS_KEY] = leaf.key;
    try {
      const written = await this.o.store.writeSecret(next, secret?.resourceVersion);
      this.o.logger.info({ action: plan.action, reason: plan.reason }, "webhook certificate written");
      // Issued just now: its renewal is two thirds of a lifetime away; the next pass re-reads anyway.
      return { secret: written, renewAt: now + Math.floor((this.leafLifetimeMs * 2) / 3) };
    } catch (err) {
      if (err instanceof StoreConflictError) {
        this.o.logger.debug({ err }, "another replica wrote the webhook certificate first; reading it again");
        return "conflict";
      }
      throw err;
    }
  }
}

function safeFacts(pem: string): ReturnType<typeof certificateFacts> | undefined {
  try {
    return certificateFacts(pem);
  } catch {
    return undefined;
  }
}

/** What the plan needs to know of the Secret's contents; anything unreadable counts as absent. */
export function stateOf(data: Record<string, string>): CertificateState {
  const caPem = splitPemBundle(data[CA_CERT] ?? "")[0];
  const caFacts =
    caPem && data[CA_KEY] && verifiesAgainst({ cert: caPem, key: data[CA_KEY] }, caPem) ? safeFacts(caPem) : undefined;
  if (!caFacts) return {};
  const leafPem = data[TLS_CERT];
  const leafFacts = leafPem && data[TLS_KEY] ? safeFacts(leafPem) : undefined;
  if (!leafFacts) return { ca: caFacts };
  return {
    ca: caFacts,
    leaf: { ...leafFacts, signedByCa: verifiesAgainst({ cert: leafPem!, key: data[TLS_KEY]! }, caPem!) },
  };
}
