// Runs the real helm binary against the chart, with its config, cache and data homes in a
// throwaway directory so tests never read or write the user's helm state.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { helmBin, kubectlBin, repoRoot } from "../support/paths.js";

export const chartDir = join(repoRoot, "charts", "healthprobe-operator");

/** Values that switch every optional part of the chart on. */
export const ALL_OPTIONAL_ON = [
  "serviceMonitor.enabled=true",
  "prometheusRule.enabled=true",
  "grafanaDashboard.enabled=true",
];

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubeManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

let sharedHome: string | undefined;

function helmHome(): string {
  if (!sharedHome) {
    sharedHome = mkdtempSync(join(tmpdir(), "healthprobe-helm-"));
    for (const d of ["config", "cache", "data"]) mkdirSync(join(sharedHome, d));
    process.once("exit", () => rmSync(sharedHome!, { recursive: true, force: true }));
  }
  return sharedHome;
}

function helmEnv(): NodeJS.ProcessEnv {
  const home = helmHome();
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_DATA_HOME: join(home, "data"),
  };
}

/** helm without a cluster (lint, template, package). Blocks: never use it against an in-process server. */
export function helm(args: string[], opts: { timeoutMs?: number } = {}): HelmResult {
  const out = spawnSync(helmBin, args, {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: opts.timeoutMs ?? 60_000,
    env: helmEnv(),
  });
  if (out.error) throw new Error(`running helm ${args.join(" ")}`, { cause: out.error });
  return { code: out.status ?? -1, stdout: out.stdout, stderr: out.stderr };
}

/** `--set a=b --set c=d` from a list of assignments. */
export function setArgs(values: string[]): string[] {
  return values.flatMap((v) => ["--set", v]);
}

/** The chart's manifests as helm template renders them (CRDs included), parsed. */
export function renderChart(
  opts: { values?: string[]; namespace?: string; releaseName?: string } = {},
): KubeManifest[] {
  const r = helm([
    "template",
    opts.releaseName ?? "healthprobe",
    chartDir,
    "--namespace",
    opts.namespace ?? "healthprobe-system",
    "--include-crds",
    ...setArgs(opts.values ?? []),
  ]);
  if (r.code !== 0) throw new Error(`helm template failed (exit ${r.code}): ${r.stderr}`);
  return parseManifests(r.stdout);
}

/** The operator container's args in the chart's Deployment as rendered with `values`. */
export function chartDeploymentArgs(opts: { values?: string[]; namespace: string; releaseName: string }): string[] {
  const deployment = renderChart(opts).find((d) => d.kind === "Deployment") as unknown as {
    spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
  };
  return deployment.spec.template.spec.containers[0]!.args;
}

export function parseManifests(text: string): KubeManifest[] {
  const docs: KubeManifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as KubeManifest | null;
    if (value) docs.push(value);
  }
  return docs;
}

/** Runs a binary without blocking the event loop: needed whenever it talks to an in-process API test server. */
function runAsync(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { input?: string; timeoutMs?: number },
): Promise<HelmResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(bin, args, { cwd: repoRoot, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`running ${bin} ${args.join(" ")}`, { cause: err }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr: signal ? `${stderr}\nkilled by ${signal}` : stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

/** helm against a cluster (install, status, uninstall, test): asynchronous, see runAsync. */
export function helmAsync(args: string[], opts: { timeoutMs?: number } = {}): Promise<HelmResult> {
  return runAsync(helmBin, args, helmEnv(), opts);
}

/** Runs the real kubectl with a kubeconfig file and a fresh discovery cache. */
export async function kubectl(
  args: string[],
  kubeconfigPath: string,
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<HelmResult> {
  const cache = mkdtempSync(join(tmpdir(), "healthprobe-kubectl-"));
  try {
    return await runAsync(
      kubectlBin,
      ["--kubeconfig", kubeconfigPath, "--cache-dir", cache, ...args],
      { PATH: process.env.PATH ?? "", HOME: cache },
      opts,
    );
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/**
 * `helm install`s the chart with `values` but no operator replicas (replicaCount=0), onto a
 * control plane where the test runs the operator itself as the chart's ServiceAccount.
 */
export async function installChartWithoutReplicas(opts: {
  kubeconfig: string;
  namespace: string;
  releaseName: string;
  values?: string[];
  timeoutMs?: number;
}): Promise<void> {
  const installed = await helmAsync(
    [
      ...["install", opts.releaseName, chartDir, "--namespace", opts.namespace, "--create-namespace"],
      ...setArgs(["replicaCount=0", ...(opts.values ?? [])]),
      ...["--kubeconfig", opts.kubeconfig],
    ],
    { timeoutMs: opts.timeoutMs ?? 120_000 },
  );
  if (installed.code !== 0)
    throw new Error(`helm install onto the control plane failed (exit ${installed.code}): ${installed.stderr}`);
}
