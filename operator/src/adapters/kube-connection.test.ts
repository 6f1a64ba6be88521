import { describe, it, expect, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer } from "../../../hack/apiserver/index.js";
import { KubeClient } from "./kube-client.js";
import { connectKube } from "./kube-connection.js";

const dir = mkdtempSync(join(tmpdir(), "kube-connection-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(
  opts: { server?: string; cluster?: Record<string, unknown>; user?: Record<string, unknown> } = {},
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "c",
        cluster: { server: opts.server ?? "http://127.0.0.1:1234", "insecure-skip-tls-verify": true, ...opts.cluster },
      },
    ],
    users: [{ name: "u", user: opts.user ?? {} }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    "current-context": "ctx",
  });
}

describe("connectKube", () => {
  it.each<[string, Record<string, unknown>, Record<string, string>]>([
    ["a token is sent as a bearer token", { token: "abc" }, { authorization: "Bearer abc" }],
    ["no credentials send no authorization header", {}, {}],
    [
      "basic auth, left to client-node, is sent as basic",
      { username: "ann", password: "pw" },
      { Authorization: `Basic ${Buffer.from("ann:pw").toString("base64")}` },
    ],
  ])("%s", async (_name, user, expected) => {
    const conn = await connectKube({ kubeconfigYaml: kubeconfig({ user }) });
    try {
      expect(conn.server).toBe("http://127.0.0.1:1234");
      expect(await conn.headers()).toMatchObject(expected);
      if (Object.keys(expected).length === 0)
        expect(Object.keys(await conn.headers()).map((k) => k.toLowerCase())).not.toContain("authorization");
    } finally {
      await conn.close();
    }
  });

  it("reads a token file named relative to the kubeconfig file", async () => {
    writeFileSync(join(dir, "token"), "from-file\n");
    writeFileSync(join(dir, "config"), kubeconfig({ user: { tokenFile: "token" } }));
    const conn = await connectKube({ kubeconfig: join(dir, "config") });
    try {
      expect(await conn.headers()).toEqual({ authorization: "Bearer from-file" });
    } finally {
      await conn.close();
    }
  });

  it.each<[string, string, RegExp]>([
    [
      "plain HTTP without insecure-skip-tls-verify",
      kubeconfig({ cluster: { "insecure-skip-tls-verify": false } }),
      /HTTP protocol is not allowed/,
    ],
    [
      "a current context naming no cluster",
      JSON.stringify({ clusters: [], contexts: [], "current-context": "none" }),
      /no current cluster/,
    ],
    [
      "a CA file that does not exist",
      kubeconfig({
        server: "https://127.0.0.1:1234",
        cluster: { "insecure-skip-tls-verify": false, "certificate-authority": "/does/not/exist.crt" },
      }),
      /exist\.crt/,
    ],
  ])("refuses %s, naming the kubeconfig", async (_name, yaml, cause) => {
    const err = (await connectKube({ kubeconfigYaml: yaml }).catch((e: unknown) => e)) as Error & { cause?: Error };
    expect(err.message).toBe("loading kubeconfig");
    expect(String(err.cause?.message)).toMatch(cause);
  });

  it("names the file when it cannot be read", async () => {
    await expect(connectKube({ kubeconfig: join(dir, "missing") })).rejects.toThrow(
      `loading kubeconfig ${join(dir, "missing")}`,
    );
  });

  it("talks to the API server as the kubeconfig's user", async () => {
    const server = await startApiServer({ controllers: false });
    const conn = await connectKube({ kubeconfigYaml: server.kubeconfig("operator") });
    try {
      const client = new KubeClient(conn);
      for (let i = 0; i < 3; i++)
        expect(await client.get<{ metadata: { name: string } }>("/api/v1/namespaces/default")).toMatchObject({
          metadata: { name: "default" },
        });
      const mine = server.requestLog.filter(
        (e) => e.user === "operator" && e.verb === "get" && e.resource === "namespaces",
      );
      expect(mine).toHaveLength(3);
    } finally {
      await conn.close();
      await server.stop();
    }
  });
});
