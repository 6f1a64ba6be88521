// Self-signed CA and serving certificates for the admission webhook. Node 20's crypto reads
// X.509 (X509Certificate) but cannot issue it, so node-forge builds and signs the certificate;
// keys come from node:crypto (native, ~50 ms for RSA 2048 against ~1 s in forge's JavaScript).
// Reading a certificate back (validity, SANs, issuer, key match) uses node:crypto only.
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { isIP } from "node:net";
import forge from "node-forge";

export interface KeyPairPem {
  cert: string;
  key: string;
}

export interface IssueOptions {
  now: number;
  lifetimeMs: number;
}

function newKey(): { forgeKey: forge.pki.rsa.PrivateKey; forgePublic: forge.pki.rsa.PublicKey; pem: string } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem);
  return { forgeKey, forgePublic: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e), pem };
}

function baseCertificate(publicKey: forge.pki.rsa.PublicKey, commonName: string, o: IssueOptions): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive 128-bit serial (the first bit clear keeps the DER integer positive).
  cert.serialNumber = `0${randomBytes(16).toString("hex").slice(1)}`;
  // A minute of slack for clocks slightly behind ours.
  cert.validity.notBefore = new Date(o.now - 60_000);
  cert.validity.notAfter = new Date(o.now + o.lifetimeMs);
  cert.setSubject([{ name: "commonName", value: commonName }]);
  return cert;
}

/** A self-signed CA that may sign server certificates only (pathLen 0). */
export function makeCertificateAuthority(commonName: string, o: IssueOptions): KeyPairPem {
  const k = newKey();
  const cert = baseCertificate(k.forgePublic, commonName, o);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(k.forgeKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: k.pem };
}

/** A server certificate for these DNS names and IP addresses, signed by the CA. */
export function issueServingCertificate(ca: KeyPairPem, hosts: readonly string[], o: IssueOptions): KeyPairPem {
  if (hosts.length === 0) throw new Error("issuing a serving certificate: no host names");
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const caKey = forge.pki.privateKeyFromPem(createPrivateKey(ca.key).export({ type: "pkcs1", format: "pem" }).toString());
  const k = newKey();
  const cert = baseCertificate(k.forgePublic, hosts[0]!, o);
  cert.setIssuer(caCert.subject.attributes);
  const altNames = hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h }));
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: k.pem };
}

/** What the renewal decision needs of a certificate, read with node:crypto. */
export interface CertificateFacts {
  notBefore: number;
  notAfter: number;
  /** DNS names and IP addresses of its subjectAltName. */
  hosts: string[];
}

export function certificateFacts(pem: string): CertificateFacts {
  const x = new X509Certificate(pem);
  const hosts = (x.subjectAltName ?? "")
    .split(", ")
    .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry)?.[1])
    .filter((h): h is string => h !== undefined);
  return { notBefore: Date.parse(x.validFrom), notAfter: Date.parse(x.validTo), hosts };
}

/** Whether the certificate was signed by this CA and the key is the certificate's own. */
export function verifiesAgainst(leaf: KeyPairPem, caCertPem: string): boolean {
  try {
    const x = new X509Certificate(leaf.cert);
    return x.verify(new X509Certificate(caCertPem).publicKey) && x.checkPrivateKey(createPrivateKey(leaf.key));
  } catch {
    return false;
  }
}

/** The PEM certificates of a bundle, in order. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}
