import { describe, it, expect } from "@jest/globals";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { loadKubeConfig, makeApis } from "./kube-config.js";

const yaml = (server: string) => `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: { server: "${server}", insecure-skip-tls-verify: true }
users:
- name: operator
  user: { token: operator }
contexts:
- name: test
  context: { cluster: test, user: operator }
current-context: test
`;

describe("loadKubeConfig", () => {
  it("loads a kubeconfig file given by path", () => {
    const dir = mkdtempSync(join(tmpdir(), "kc-"));
    try {
      const path = join(dir, "config");
      writeFileSync(path, yaml("http://127.0.0.1:1234"));
      expect(loadKubeConfig({ kubeconfig: path }).getCurrentCluster()?.server).toBe("http://127.0.0.1:1234");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prefers the path over the environment's KUBECONFIG", () => {
    const dir = mkdtempSync(join(tmpdir(), "kc-"));
    try {
      writeFileSync(join(dir, "a"), yaml("http://127.0.0.1:1111"));
      writeFileSync(join(dir, "b"), yaml("http://127.0.0.1:2222"));
      const kc = loadKubeConfig({ kubeconfig: join(dir, "a"), env: { KUBECONFIG: join(dir, "b") } });
      expect(kc.getCurrentCluster()?.server).toBe("http://127.0.0.1:1111");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the file when it cannot be loaded", () => {
    expect(() => loadKubeConfig({ kubeconfig: "does-not-exist.yaml" })).toThrow(
      "loading kubeconfig does-not-exist.yaml",
    );
  });

  it("builds the API clients the operator uses", () => {
    const apis = makeApis(loadKubeConfig({ kubeconfigYaml: yaml("http://127.0.0.1:1234") }));
    expect(apis.core).toBeInstanceOf(CoreV1Api);
    expect(Object.keys(apis).sort()).toEqual([
      "coordination",
      "core",
      "customObjects",
      "discovery",
      "events",
      "policy",
    ]);
  });
});
