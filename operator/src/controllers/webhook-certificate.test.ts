import { describe, it, expect, beforeEach } from "@jest/globals";
import { X509Certificate } from "node:crypto";
import {
  StoreConflictError,
  type CertificateSecret,
  type WebhookCertificateStore,
} from "../adapters/webhook-certificate-store.js";
import { certificateFacts, splitPemBundle, type KeyPairPem } from "../runtime/certificates.js";
import { WebhookCertificate, CA_CERT, TLS_CERT, stateOf } from "./webhook-certificate.js";
import { quietLogger } from "./testing/quiet-logger.js";

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const HOSTS = ["hp-webhook.healthprobe-system.svc"];

/** A Secret and a webhook configuration in memory, with resourceVersions as the API keeps them. */
class MemoryStore implements WebhookCertificateStore {
  secret: CertificateSecret | undefined;
  caBundle: string | undefined;
  configurationExists = true;
  writes = 0;
  private version = 0;
  /** Called before a write lands: lets a test play another replica writing first. */
  beforeWrite: (() => void) | undefined;

  async readSecret() {
    return this.secret ? { ...this.secret, data: { ...this.secret.data } } : undefined;
  }
  async writeSecret(data: Record<string, string>, resourceVersion: string | undefined) {
    this.beforeWrite?.();
    this.beforeWrite = undefined;
    if ((this.secret?.resourceVersion ?? undefined) !== resourceVersion)
      throw new StoreConflictError("conflict", { cause: undefined });
    this.writes++;
    this.secret = { resourceVersion: String(++this.version), data: { ...data } };
    return { ...this.secret };
  }
  async setCaBundle(pem: string) {
    if (!this.configurationExists) return "missing" as const;
    if (this.caBundle === pem) return "unchanged" as const;
    this.caBundle = pem;
    return "updated" as const;
  }
}

describe("WebhookCertificate", () => {
  let now: number;
  let store: MemoryStore;
  let served: KeyPairPem[];
  const keeper = (over: Partial<ConstructorParameters<typeof WebhookCertificate>[0]> = {}) =>
    new WebhookCertificate({
      store,
      hosts: HOSTS,
      manage: true,
      keepCaBundle: true,
      serve: (pair) => served.push(pair),
      clock: { now: () => now, setTimeout: () => undefined, clearTimeout: () => undefined },
      logger: quietLogger(),
      caLifetimeMs: 300 * DAY,
      leafLifetimeMs: 30 * DAY,
      resyncMs: 60_000,
      ...over,
    });

  beforeEach(() => {
    now = T0;
    store = new MemoryStore();
    served = [];
  });

  it("creates the Secret with a CA and a serving certificate it signed, serves it and sets the caBundle", async () => {
    const result = await keeper().reconcile();
    expect(store.writes).toBe(1);
    const data = store.secret!.data;
    expect(stateOf(data).leaf).toMatchObject({ signedByCa: true, hosts: HOSTS });
    expect(served.map((p) => p.cert)).toEqual([data[TLS_CERT]]);
    expect(store.caBundle).toBe(data[CA_CERT]);
    expect(new X509Certificate(data[TLS_CERT]!).checkIssued(new X509Certificate(data[CA_CERT]!))).toBe(true);
    expect(result).toEqual({ requeueAfterMs: 60_000 });
  });

  it("writes nothing on a second pass and serves the same certificate", async () => {
    const k = keeper();
    await k.reconcile();
    await k.reconcile();
    expect(store.writes).toBe(1);
    expect(served).toHaveLength(1);
  });

  it("asks to be run again at the renewal time when it comes before the resync", async () => {
    const k = keeper({ leafLifetimeMs: 60_000, resyncMs: 3_600_000 });
    await k.reconcile();
    now += 10_000;
    const result = await k.reconcile();
    const facts = certificateFacts(store.secret!.data[TLS_CERT]!);
    expect(result).toEqual({
      requeueAfterMs: facts.notBefore + Math.floor(((facts.notAfter - facts.notBefore) * 2) / 3) - now,
    });
  });

  it("renews the serving certificate at two thirds of its lifetime, with the same CA, and serves the new one", async () => {
    const k = keeper();
    await k.reconcile();
    const first = store.secret!.data;
    now = T0 + 20 * DAY;
    await k.reconcile();
    const second = store.secret!.data;
    expect(store.writes).toBe(2);
    expect(second[CA_CERT]).toBe(first[CA_CERT]);
    expect(second[TLS_CERT]).not.toBe(first[TLS_CERT]);
    expect(served.map((p) => p.cert)).toEqual([first[TLS_CERT], second[TLS_CERT]]);
  });

  it("renews the CA at two thirds of its lifetime and keeps the old CA in the bundle while it is valid", async () => {
    const k = keeper();
    await k.reconcile();
    const oldCa = splitPemBundle(store.secret!.data[CA_CERT]!)[0];
    now = T0 + 200 * DAY;
    await k.reconcile();
    const bundle = splitPemBundle(store.secret!.data[CA_CERT]!);
    expect(bundle).toHaveLength(2);
    expect(bundle[1]).toBe(oldCa);
    expect(stateOf(store.secret!.data).leaf?.signedByCa).toBe(true);
    expect(store.caBundle).toBe(store.secret!.data[CA_CERT]);
  });

  it("on a conflict (another replica wrote first) keeps nothing of its own, reads again soon and serves the other's certificate", async () => {
    // The other replica's certificate, made against a store of its own.
    const mine = store;
    store = new MemoryStore();
    await keeper({ serve: () => undefined }).reconcile();
    const others = store.secret!.data;
    store = mine;
    // It lands between this replica's read and its write.
    store.beforeWrite = () => void (store.secret = { resourceVersion: "other-1", data: others });
    const k = keeper();
    expect(await k.reconcile()).toEqual({ requeueAfterMs: 1_000 });
    expect(served).toHaveLength(0);
    expect(store.secret!.data).toEqual(others);
    await k.reconcile();
    expect(store.writes).toBe(0);
    expect(served.map((p) => p.cert)).toEqual([others[TLS_CERT]]);
    expect(store.caBundle).toBe(others[CA_CERT]);
  });

  it("only reads the Secret when the certificate is not its to manage (cert-manager), and keeps no caBundle", async () => {
    await keeper().reconcile();
    store.caBundle = undefined;
    served = [];
    const writes = store.writes;
    now = T0 + 29 * DAY;
    await keeper({ manage: false }).reconcile();
    expect(store.writes).toBe(writes);
    expect(served).toHaveLength(1);
    expect(store.caBundle).toBeUndefined();
  });

  it("serves nothing and looks again within 10 s while an unmanaged Secret does not exist", async () => {
    expect(await keeper({ manage: false }).reconcile()).toEqual({ requeueAfterMs: 10_000 });
    expect(served).toHaveLength(0);
  });

  it("still serves when the webhook configuration does not exist yet", async () => {
    store.configurationExists = false;
    await keeper().reconcile();
    expect(served).toHaveLength(1);
    expect(store.caBundle).toBeUndefined();
  });

  it("issues a new serving certificate when a host is added", async () => {
    await keeper().reconcile();
    await keeper({ hosts: [...HOSTS, "10.244.3.1"] }).reconcile();
    expect(certificateFacts(store.secret!.data[TLS_CERT]!).hosts).toEqual([...HOSTS, "10.244.3.1"]);
  });
});
