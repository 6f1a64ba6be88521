// When the webhook's serving certificate (and the CA that signs it) must be made again.
//
// Rules:
// - A certificate is renewed at two thirds of its lifetime (notBefore + 2/3 × (notAfter −
//   notBefore)), so a renewal that fails keeps a third of the lifetime to be retried in.
// - A new CA when there is none (or it cannot be read), or its renewal time has come; a new CA
//   always comes with a new serving certificate signed by it.
// - A new serving certificate when there is none, it was not signed by the current CA (or its key
//   does not match it), it lacks a host name the webhook is reached by, it would outlive its CA,
//   or its renewal time has come.
// - Otherwise keep both, and look again at the earlier of the two renewal times.
export interface Validity {
  notBefore: number;
  notAfter: number;
}

export interface CertificateState {
  /** The signing CA (with its key); undefined when absent or unreadable. */
  ca?: Validity;
  /** The serving certificate; undefined when absent or unreadable. */
  leaf?: Validity & { hosts: readonly string[]; signedByCa: boolean };
}

export type CertificatePlan =
  { action: "keep"; renewAt: number; reason: string } | { action: "new-ca" | "new-leaf"; reason: string };

export function renewalTime(v: Validity): number {
  return v.notBefore + Math.floor(((v.notAfter - v.notBefore) * 2) / 3);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function planCertificate(state: CertificateState, wantedHosts: readonly string[], now: number): CertificatePlan {
  const { ca, leaf } = state;
  if (!ca) return { action: "new-ca", reason: "no readable CA certificate and key" };
  if (now >= renewalTime(ca))
    return {
      action: "new-ca",
      reason: `the CA is due for renewal since ${iso(renewalTime(ca))} (expires ${iso(ca.notAfter)})`,
    };
  if (!leaf) return { action: "new-leaf", reason: "no readable serving certificate and key" };
  if (!leaf.signedByCa)
    return {
      action: "new-leaf",
      reason: "the serving certificate was not signed by the current CA, or its key does not match it",
    };
  const missing = wantedHosts.filter((h) => !leaf.hosts.includes(h));
  if (missing.length > 0)
    return { action: "new-leaf", reason: `the serving certificate does not name ${missing.join(", ")}` };
  if (leaf.notAfter > ca.notAfter)
    return { action: "new-leaf", reason: "the serving certificate would outlive its CA" };
  if (now >= renewalTime(leaf))
    return {
      action: "new-leaf",
      reason: `the serving certificate is due for renewal since ${iso(renewalTime(leaf))} (expires ${iso(leaf.notAfter)})`,
    };
  const renewAt = Math.min(renewalTime(leaf), renewalTime(ca));
  return { action: "keep", renewAt, reason: `valid; next renewal at ${iso(renewAt)}` };
}
