import { describe, it, expect } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { repoRoot } from "../../test/support/paths.js";
import { waitFor } from "../../test/support/wait-for.js";

const tsx = join(repoRoot, "node_modules", ".bin", "tsx");
const main = join(repoRoot, "hack", "apiserver", "main.ts");

function run(args: string[]) {
  const child = spawn(tsx, [main, ...args], { cwd: repoRoot });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe("the apiserver command", () => {
  it.each([
    [["--bogus"], "unknown flag: --bogus"],
    [["--port"], "flag needs an argument: --port"],
    [["--port", "http"], 'invalid value "http" for flag --port'],
    [["--pod-cidr", "10.0.0.0"], 'invalid value "10.0.0.0" for flag --pod-cidr'],
  ])("exits 2 on %j, naming the flag", async (args, message) => {
    const p = run(args);
    expect(await p.exited).toBe(2);
    expect(p.err()).toContain(message);
  });

  it("serves with the kubeconfig it writes, and exits 0 on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "apiserver-cmd-"));
    const kubeconfig = join(dir, "kubeconfig");
    const p = run(["--port", "0", "--kubeconfig", kubeconfig, "--no-controllers"]);
    try {
      await waitFor(() => p.out().includes("serving") && existsSync(kubeconfig), {
        what: "server up",
        timeoutMs: 20_000,
      });
      const kc = new KubeConfig();
      kc.loadFromString(readFileSync(kubeconfig, "utf8"));
      const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(ns.items.map((n) => n.metadata!.name)).toEqual(expect.arrayContaining(["default", "kube-system"]));
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    } finally {
      p.child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
