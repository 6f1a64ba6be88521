import { describe, expect, it } from "@jest/globals";
import { parsePolicySpec } from "../api/parse-policy.js";
import type { ProbeSpec } from "../api/policy-schema.js";
import { planProbe, type SecretRef } from "./probe-plan.js";

function aProbeSpec(probe: Record<string, unknown>): ProbeSpec {
  const fields = Object.fromEntries(
    Object.entries({ port: 8080, path: "/healthz", ...probe }).filter(([, v]) => v !== undefined),
  );
  const parsed = parsePolicySpec({ serviceName: "web", selector: { matchLabels: { app: "web" } }, probe: fields });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.spec.probe;
}

const pod = { ip: "10.1.2.3", containers: [{ ports: [{ name: "http", containerPort: 8081 }] }] };
const bytes = (s: string) => new TextEncoder().encode(s);
const secrets = (data: Record<string, string>) => (ref: SecretRef) =>
  data[`${ref.name}/${ref.key}`] === undefined ? undefined : bytes(data[`${ref.name}/${ref.key}`] as string);

describe("planProbe", () => {
  it("turns the defaults into a GET with the 2xx judgement, the period and the timeout", () => {
    const planned = planProbe(aProbeSpec({}), pod, secrets({}));
    expect(planned).toEqual({
      ok: true,
      probe: {
        request: { scheme: "HTTP", address: "10.1.2.3", port: 8080, path: "/healthz", method: "GET", headers: [] },
        judgement: { timeoutMs: 60_000, statusCodes: [[200, 299]] },
        periodMs: 60_000,
      },
    });
  });

  it("resolves a named port, secret headers, the signature key, host, CA and body match", () => {
    const spec = aProbeSpec({
      scheme: "HTTPS",
      port: "http",
      host: "app.example",
      headers: [
        { name: "X-Env", value: "prod" },
        { name: "Authorization", valueFrom: { secretKeyRef: { name: "auth", key: "token" } } },
      ],
      periodSeconds: 30,
      timeoutSeconds: 5,
      match: { statusCodes: ["200", "300-399"], bodyContains: "ok" },
      tls: { caBundle: "PEM" },
      signature: { secretRef: { name: "sig", key: "key" } },
    });
    const planned = planProbe(spec, pod, secrets({ "auth/token": "Bearer t", "sig/key": "k" }));
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.probe.request).toMatchObject({
      scheme: "HTTPS",
      port: 8081,
      host: "app.example",
      caBundle: "PEM",
      headers: [
        { name: "X-Env", value: "prod" },
        { name: "Authorization", value: "Bearer t" },
      ],
    });
    expect(planned.probe.request.signatureKey).toEqual(bytes("k"));
    expect(planned.probe.judgement).toEqual({
      timeoutMs: 5_000,
      statusCodes: [
        [200, 200],
        [300, 399],
      ],
      bodyContains: "ok",
    });
    expect(planned.probe.periodMs).toBe(30_000);
  });

  it("plans a TCP probe as the address and port, with the latency threshold", () => {
    const planned = planProbe(
      aProbeSpec({
        type: "TCP",
        path: undefined,
        periodSeconds: 10,
        timeoutSeconds: 2,
        match: { maxLatencyMilliseconds: 250 },
      }),
      pod,
      secrets({}),
    );
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.probe.request).toMatchObject({ type: "TCP", address: "10.1.2.3", port: 8080, path: "" });
    expect(planned.probe.judgement).toMatchObject({ timeoutMs: 2_000, maxLatencyMs: 250 });
  });

  it("plans a gRPC probe with its service, TLS, authority and metadata", () => {
    const spec = aProbeSpec({
      type: "GRPC",
      path: undefined,
      scheme: "HTTPS",
      host: "cart.example",
      grpc: { service: "shop.Cart" },
      tls: { caBundle: "PEM" },
      headers: [{ name: "X-Env", value: "prod" }],
    });
    const planned = planProbe(spec, pod, secrets({}));
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.probe.request).toMatchObject({
      type: "GRPC",
      scheme: "HTTPS",
      grpcService: "shop.Cart",
      host: "cart.example",
      caBundle: "PEM",
      headers: [{ name: "X-Env", value: "prod" }],
    });
    const overall = planProbe(aProbeSpec({ type: "GRPC", path: undefined }), pod, secrets({}));
    expect(overall.ok && overall.probe.request.grpcService).toBe("");
  });

  const failures: Array<[string, Record<string, unknown>, string, string]> = [
    ["an unknown port name", { port: "admin" }, "spec.probe.port", "PortNotResolved"],
    [
      "a missing header Secret",
      { headers: [{ name: "A", valueFrom: { secretKeyRef: { name: "gone", key: "k" } } }] },
      "spec.probe.headers[0].valueFrom.secretKeyRef",
      "SecretNotFound",
    ],
    [
      "a missing signature Secret",
      { signature: { secretRef: { name: "gone", key: "k" } } },
      "spec.probe.signature.secretRef",
      "SecretNotFound",
    ],
  ];
  it.each(failures)("names the field and the reason for %s", (_n, probe, field, reason) => {
    const planned = planProbe(aProbeSpec(probe), pod, secrets({}));
    expect(planned).toMatchObject({ ok: false, field, reason });
  });
});
