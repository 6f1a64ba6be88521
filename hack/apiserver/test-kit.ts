// Shared builders and helpers for the API test server's own tests.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { kubectlBin } from "../../test/support/paths.js";
import type { TestApiServer } from "./index.js";

/** Anything that hands out a kubeconfig per user: the API test server, or the real control plane. */
export type KubeconfigSource = Pick<TestApiServer, "kubeconfig">;

/** Call options that make client-node send a JSON merge patch (its default is a JSON patch). */
export const asMergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export function kubeConfigFor(server: KubeconfigSource, user = "admin"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig(user));
  return kc;
}

export function objectApi(server: TestApiServer, user = "admin"): KubernetesObjectApi {
  return KubernetesObjectApi.makeApiClient(kubeConfigFor(server, user));
}

export type Obj = KubernetesObject & Record<string, any>;

let counter = 0;
export function uniqueName(prefix: string): string {
  counter++;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 6)}`;
}

export function aPod(
  opts: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: any[];
    phase?: string;
  } = {},
): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: opts.name ?? uniqueName("pod"),
      namespace: opts.namespace ?? "default",
      labels: opts.labels ?? { app: "web" },
      ...(opts.finalizers ? { finalizers: opts.finalizers } : {}),
      ...(opts.ownerReferences ? { ownerReferences: opts.ownerReferences } : {}),
    },
    spec: { containers: [{ name: "app", image: "nginx:1.27", ports: [{ containerPort: 8080 }] }] },
  };
}

export function aConfigMap(
  opts: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    data?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: any[];
  } = {},
): Obj {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: opts.name ?? uniqueName("cm"),
      namespace: opts.namespace ?? "default",
      ...(opts.labels ? { labels: opts.labels } : {}),
      ...(opts.finalizers ? { finalizers: opts.finalizers } : {}),
      ...(opts.ownerReferences ? { ownerReferences: opts.ownerReferences } : {}),
    },
    data: opts.data ?? { key: "value" },
  };
}

export function ownerRef(owner: Obj): Record<string, unknown> {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata!.name, uid: owner.metadata!.uid };
}

/** The metav1.Status a failed call returned, parsed. */
export async function statusOf(
  call: Promise<unknown>,
): Promise<{ code: number; reason: string; message: string; details?: any }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
      return { code: err.code, reason: body.reason, message: body.message, details: body.details };
    }
    throw err;
  }
  throw new Error("expected the call to fail");
}

/** Raw HTTP to the server, for what client-node does not expose. */
export async function http(
  server: TestApiServer,
  method: string,
  path: string,
  opts: { body?: unknown; contentType?: string; accept?: string; user?: string } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(server.url + path, {
    method,
    headers: {
      Authorization: `Bearer ${opts.user ?? "admin"}`,
      ...(opts.body !== undefined ? { "Content-Type": opts.contentType ?? "application/json" } : {}),
      ...(opts.accept ? { Accept: opts.accept } : {}),
    },
    body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: res.status, body, headers: res.headers };
}

/** Runs the real kubectl against the server with a fresh cache dir per call. */
export class Kubectl {
  private readonly dir: string;
  readonly kubeconfig: string;
  constructor(server: KubeconfigSource) {
    this.dir = mkdtempSync(join(tmpdir(), "kubectl-"));
    this.kubeconfig = join(this.dir, "kubeconfig");
    writeFileSync(this.kubeconfig, server.kubeconfig("kubectl-user"));
  }

  /** HOME for kubectl processes, inside the temp dir. */
  get home(): string {
    return this.dir;
  }

  file(name: string, content: string): string {
    const p = join(this.dir, name);
    writeFileSync(p, content);
    return p;
  }

  run(args: string[], opts: { timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const cache = mkdtempSync(join(this.dir, "cache-"));
    return new Promise((resolve) => {
      execFile(
        kubectlBin,
        ["--kubeconfig", this.kubeconfig, "--cache-dir", cache, ...args],
        { timeout: opts.timeoutMs ?? 30_000, env: { ...process.env, HOME: this.dir } },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as any).code === "number" ? (err as any).code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
