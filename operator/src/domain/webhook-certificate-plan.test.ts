import { describe, it, expect } from "@jest/globals";
import { planCertificate, renewalTime, type CertificateState } from "./webhook-certificate-plan.js";
import { HOUR, T0 } from "./testing/builders.js";

const DAY = 24 * HOUR;
const HOSTS = ["hp-webhook.healthprobe-system.svc"];

/** A CA valid for 300 days and a leaf valid for 30 days, both from T0. */
function aState(
  over: {
    ca?: Partial<NonNullable<CertificateState["ca"]>> | null;
    leaf?: Partial<NonNullable<CertificateState["leaf"]>> | null;
  } = {},
): CertificateState {
  const ca = over.ca === null ? undefined : { notBefore: T0, notAfter: T0 + 300 * DAY, ...over.ca };
  const leaf =
    over.leaf === null
      ? undefined
      : { notBefore: T0, notAfter: T0 + 30 * DAY, hosts: HOSTS, signedByCa: true, ...over.leaf };
  return { ...(ca ? { ca } : {}), ...(leaf ? { leaf } : {}) };
}

describe("planCertificate", () => {
  const cases: Array<{ name: string; state: CertificateState; now: number; action: string; reason: string }> = [
    {
      name: "a missing CA makes a new CA",
      state: aState({ ca: null, leaf: null }),
      now: T0,
      action: "new-ca",
      reason: "no readable CA certificate and key",
    },
    {
      name: "a CA at two thirds of its lifetime is renewed",
      state: aState(),
      now: T0 + 200 * DAY,
      action: "new-ca",
      reason: "the CA is due for renewal since 2026-07-20T00:00:00Z (expires 2026-10-28T00:00:00Z)",
    },
    {
      name: "a missing serving certificate is issued",
      state: aState({ leaf: null }),
      now: T0,
      action: "new-leaf",
      reason: "no readable serving certificate and key",
    },
    {
      name: "a serving certificate from another CA is issued again",
      state: aState({ leaf: { signedByCa: false } }),
      now: T0,
      action: "new-leaf",
      reason: "the serving certificate was not signed by the current CA, or its key does not match it",
    },
    {
      name: "a serving certificate lacking a wanted host is issued again",
      state: aState({ leaf: { hosts: ["old.healthprobe-system.svc"] } }),
      now: T0,
      action: "new-leaf",
      reason: "the serving certificate does not name hp-webhook.healthprobe-system.svc",
    },
    {
      name: "a serving certificate that would outlive its CA is issued again",
      state: aState({ leaf: { notAfter: T0 + 301 * DAY } }),
      now: T0,
      action: "new-leaf",
      reason: "the serving certificate would outlive its CA",
    },
    {
      name: "a serving certificate at two thirds of its lifetime is renewed",
      state: aState(),
      now: T0 + 20 * DAY,
      action: "new-leaf",
      reason: "the serving certificate is due for renewal since 2026-01-21T00:00:00Z (expires 2026-01-31T00:00:00Z)",
    },
    {
      name: "a valid pair is kept until the leaf's renewal",
      state: aState(),
      now: T0 + 20 * DAY - 1,
      action: "keep",
      reason: "valid; next renewal at 2026-01-21T00:00:00Z",
    },
  ];

  it.each(cases)("$name", ({ state, now, action, reason }) => {
    expect(planCertificate(state, HOSTS, now)).toMatchObject({ action, reason });
  });

  it("keeps until the earlier renewal: the CA's when it comes first", () => {
    const state = aState({ ca: { notAfter: T0 + 15 * DAY }, leaf: { notAfter: T0 + 15 * DAY } });
    expect(planCertificate(state, HOSTS, T0)).toEqual({
      action: "keep",
      renewAt: T0 + 10 * DAY,
      reason: "valid; next renewal at 2026-01-11T00:00:00Z",
    });
  });

  it("renews at exactly two thirds of the lifetime", () => {
    expect(renewalTime({ notBefore: T0, notAfter: T0 + 3 * HOUR })).toBe(T0 + 2 * HOUR);
  });
});
