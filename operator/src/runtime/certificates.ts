// Self-signed CA and serving certificates for the admission webhook. Node 20's crypto reads
// X.509 (X509Certificate) but cannot issue it, so node-forge builds the certificate (its ASN.1);
// keys and the signature come from node:crypto (native: forge's JavaScript RSA took ~1 s per
// certificate on a busy 2-core machine, node's a few ms plus key generation).
// Reading a certificate back (validity, SANs, issuer, key match) uses node:crypto only.
import { X509Certificate, createPrivateKey, generateKeyPair, randomBytes, sign, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
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

const generateRsaKeyPair = promisify(generateKeyPair);
// Present in node-forge, missing from its type definitions.
const getTBSCertificate = (forge.pki as unknown as { getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1 })
  .getTBSCertificate;

/** A new RSA 2048 key, made off the event loop (prime search takes 50 ms to seconds on a busy machine). */
async function newKey(): Promise<{ key: KeyObject; forgePublic: forge.pki.rsa.PublicKey; pem: string }> {
  const { privateKey, publicKey } = await generateRsaKeyPair("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const forgePublic = forge.pki.publicKeyFromPem(
    publicKey.export({ type: "spki", format: "pem" }).toString(),
  ) as forge.pki.rsa.PublicKey;
  return { key: privateKey, forgePublic, pem };
}

/** Signs the certificate with node:crypto: sha256WithRSAEncryption over its DER TBSCertificate. */
function signWith(cert: forge.pki.Certificate, key: KeyObject): string {
  const oid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.siginfo.algorithmOid = oid;
  cert.signatureOid = oid;
  cert.md = forge.md.sha256.create();
  const tbs = getTBSCertificate(cert);
  cert.tbsCertificate = tbs;
  cert.signature = sign("sha256", Buffer.from(forge.asn1.toDer(tbs).getBytes(), "binary"), key).toString("binary");
  return forge.pki.certificateToPem(cert);
}

function baseCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  commonName: string,
  o: IssueOptions,
): forge.pki.Certificate {
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
export async function makeCertificateAuthority(commonName: string, o: IssueOptions): Promise<KeyPairPem> {
  const k = await newKey();
  const cert = baseCertificate(k.forgePublic, commonName, o);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  return { cert: signWith(cert, k.key), key: k.pem };
}

/** A server certificate for these DNS names and IP addresses, signed by the CA. */
export async function issueServingCertificate(
  ca: KeyPairPem,
  hosts: readonly string[],
  o: IssueOptions,
): Promise<KeyPairPem> {
  if (hosts.length === 0) throw new Error("issuing a serving certificate: no host names");
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const caKey = createPrivateKey(ca.key);
  const k = await newKey();
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
  return { cert: signWith(cert, caKey), key: k.pem };
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
