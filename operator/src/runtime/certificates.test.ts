import { describe, it, expect, beforeAll } from "@jest/globals";
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { request } from "node:https";
import {
  certificateFacts,
  issueServingCertificate,
  makeCertificateAuthority,
  splitPemBundle,
  verifiesAgainst,
  type KeyPairPem,
} from "./certificates.js";
import { renewalTime } from "../domain/webhook-certificate-plan.js";

const NOW = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const HOSTS = ["hp-webhook.healthprobe-system.svc", "hp-webhook.healthprobe-system.svc.cluster.local", "127.0.0.1"];

describe("the certificate maker", () => {
  let ca: KeyPairPem;
  let leaf: KeyPairPem;
  beforeAll(async () => {
    ca = await makeCertificateAuthority("healthprobe-operator webhook CA", { now: NOW, lifetimeMs: 3650 * DAY });
    leaf = await issueServingCertificate(ca, HOSTS, { now: NOW, lifetimeMs: 365 * DAY });
  });

  it("makes a CA that node's X.509 reads as a CA, self-signed", () => {
    const x = new X509Certificate(ca.cert);
    expect(x.ca).toBe(true);
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.subject).toBe("CN=healthprobe-operator webhook CA");
  });

  it("issues a serving certificate signed by the CA, with its key, for every host as a SAN", () => {
    const x = new X509Certificate(leaf.cert);
    expect(x.ca).toBe(false);
    expect(x.checkIssued(new X509Certificate(ca.cert))).toBe(true);
    expect(verifiesAgainst(leaf, ca.cert)).toBe(true);
    expect(x.checkHost("hp-webhook.healthprobe-system.svc")).toBe("hp-webhook.healthprobe-system.svc");
    expect(x.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(certificateFacts(leaf.cert).hosts).toEqual(HOSTS);
  });

  it("dates the certificate from a minute before now to now + lifetime, so renewal falls at two thirds", () => {
    const facts = certificateFacts(leaf.cert);
    expect(facts.notBefore).toBe(NOW - 60_000);
    expect(facts.notAfter).toBe(NOW + 365 * DAY);
    expect(renewalTime(facts)).toBe(NOW - 60_000 + Math.floor(((365 * DAY + 60_000) * 2) / 3));
  });

  it("does not verify a serving certificate against another CA", async () => {
    const other = await makeCertificateAuthority("other", { now: NOW, lifetimeMs: DAY });
    expect(verifiesAgainst(leaf, other.cert)).toBe(false);
    expect(verifiesAgainst({ cert: leaf.cert, key: other.key }, ca.cert)).toBe(false);
  });

  it("splits a bundle of CAs in order", async () => {
    const other = await makeCertificateAuthority("other", { now: NOW, lifetimeMs: DAY });
    expect(splitPemBundle(`${other.cert}${ca.cert}`)).toEqual([other.cert.trim(), ca.cert.trim()]);
  });

  it("serves TLS that a client trusting only the CA accepts for the named host", async () => {
    const now = Date.now();
    const liveCa = await makeCertificateAuthority("live CA", { now, lifetimeMs: DAY });
    const live = await issueServingCertificate(liveCa, ["localhost", "127.0.0.1"], { now, lifetimeMs: DAY });
    const server = createServer({ cert: live.cert, key: live.key }, (_req, res) => res.end("ok"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, path: "/", ca: liveCa.cert, agent: false }, (res) => {
          let text = "";
          res
            .setEncoding("utf8")
            .on("data", (d: string) => (text += d))
            .on("end", () => resolve(text));
        });
        req.on("error", reject);
        req.end();
      });
      expect(body).toBe("ok");
    } finally {
      server.close();
    }
  });
});
