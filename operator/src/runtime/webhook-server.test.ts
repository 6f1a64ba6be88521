import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { request } from "node:https";
import { issueServingCertificate, makeCertificateAuthority, type KeyPairPem } from "./certificates.js";
import { startWebhookServer, type RunningWebhookServer } from "./webhook-server.js";

function call(
  port: number,
  ca: string,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, ca, agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res
          .setEncoding("utf8")
          .on("data", (d: string) => (text += d))
          .on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("the webhook's HTTPS listener", () => {
  let server: RunningWebhookServer;
  let ca: KeyPairPem;
  let leaf: KeyPairPem;
  const seen: unknown[] = [];

  beforeAll(async () => {
    const now = Date.now();
    ca = await makeCertificateAuthority("test CA", { now, lifetimeMs: 86_400_000 });
    leaf = await issueServingCertificate(ca, ["127.0.0.1"], { now, lifetimeMs: 86_400_000 });
    server = await startWebhookServer({
      address: { disabled: false, host: "127.0.0.1", port: 0 },
      handler: (body) => {
        seen.push(body);
        return { status: 200, body: { echoed: body } };
      },
    });
  });
  afterAll(() => server.close());

  it("fails every TLS handshake until a certificate is loaded (kube-apiserver then applies failurePolicy Ignore)", async () => {
    await expect(call(server.port, ca.cert, "POST", "/mutate-pods", "{}")).rejects.toThrow();
  });

  it("answers POST /mutate-pods with the handler's JSON once it has a certificate the CA signed", async () => {
    server.setCertificate(leaf);
    const r = await call(server.port, ca.cert, "POST", "/mutate-pods", JSON.stringify({ kind: "AdmissionReview" }));
    expect(r).toEqual({ status: 200, body: JSON.stringify({ echoed: { kind: "AdmissionReview" } }) });
  });

  it.each([
    { name: "another path", method: "POST", path: "/validate", body: "{}", status: 404 },
    { name: "a GET", method: "GET", path: "/mutate-pods", body: undefined, status: 405 },
    { name: "a body that is not JSON", method: "POST", path: "/mutate-pods", body: "{", status: 400 },
  ])("refuses $name without calling the handler", async ({ method, path, body, status }) => {
    const before = seen.length;
    expect((await call(server.port, ca.cert, method, path, body)).status).toBe(status);
    expect(seen.length).toBe(before);
  });
});
