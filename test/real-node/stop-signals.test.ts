// Stopping the real node as a user does: Ctrl-C in a terminal (SIGINT to the whole process group),
// SIGTERM to the entry point, and a crash (SIGKILL to the entry point alone, its children left
// running) cleaned by the next start. Each run has a workload pod, so there are sandboxes, veths,
// mounts and shims to leave behind. Needs what real-node.test.ts needs: HEALTHPROBE_TEST_NODE=1.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { startRealNode } from "../../hack/control-plane/real-node/cluster.js";
import { waitFor } from "../support/wait-for.js";
import { leftovers, traceRun, type RunTrace } from "./leftovers.js";
import { WORKLOAD_IMAGE } from "../support/workload-control.js";

const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
const suite = enabled ? describe : describe.skip;
const loader = join(process.cwd(), "node_modules", "tsx", "dist", "loader.mjs");
const entry = join(process.cwd(), "hack", "control-plane", "real-node", "main.ts");

interface Running {
  child: ChildProcess;
  exit: Promise<void>;
  trace: RunTrace;
}

async function runWorkloadPod(kubeconfig: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace: "default",
    body: {
      metadata: { name: "workload" },
      spec: {
        nodeName: "node-1",
        automountServiceAccountToken: false,
        containers: [{ name: "workload", image: WORKLOAD_IMAGE, imagePullPolicy: "Never" }],
      },
    },
  });
  await waitFor(
    () => core.readNamespacedPod({ name: "workload", namespace: "default" }).then((p) => p.status?.phase === "Running"),
    {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: "the workload pod to run",
    },
  );
}

/** Starts the entry point as a terminal would (a process group of its own) with a running pod. */
async function startEntry(scratch: string): Promise<Running> {
  const kubeconfig = join(scratch, `kubeconfig-${Date.now()}`);
  const child = spawn(process.execPath, ["--import", `file://${loader}`, entry, "--kubeconfig", kubeconfig], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const logs = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`the entry point exited with ${child.exitCode}:\n${output}`);
      return /logs: (\S+)/.exec(output)?.[1];
    },
    { timeoutMs: 900_000, intervalMs: 500, what: "the real node to be ready" },
  );
  await runWorkloadPod(readFileSync(kubeconfig, "utf8"));
  const nodeNs = /network namespace (\S+)/.exec(output)![1]!;
  return { child, exit, trace: await traceRun(logs, nodeNs) };
}

suite("stopping the real node leaves nothing behind", () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "real-node-stop-"));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.each([
    ["Ctrl-C, SIGINT to the whole process group", (c: ChildProcess) => process.kill(-c.pid!, "SIGINT")],
    ["SIGTERM to the entry point", (c: ChildProcess) => process.kill(c.pid!, "SIGTERM")],
  ])(
    "%s",
    async (_name, signal) => {
      const r = await startEntry(scratch);
      expect(r.trace.podNetns.length).toBeGreaterThan(0);
      signal(r.child);
      await r.exit;
      expect(r.child.exitCode).toBe(0);
      expect(await leftovers(r.trace)).toEqual([]);
    },
    1_200_000,
  );

  it("a crash (SIGKILL to the entry point, its children left running) is cleaned by the next start", async () => {
    const r = await startEntry(scratch);
    process.kill(r.child.pid!, "SIGKILL");
    await r.exit;
    expect((await leftovers(r.trace)).length).toBeGreaterThan(0);
    const next = await startRealNode();
    // The next run may draw the crashed run's slot (1 in 250): then its own directory and namespace
    // carry the same names, and the check waits until it stopped too.
    const sameSlot = next.dir === r.trace.dir;
    try {
      if (!sameSlot) expect(await leftovers(r.trace)).toEqual([]);
    } finally {
      await next.stop();
    }
    if (sameSlot) expect(await leftovers(r.trace)).toEqual([]);
  }, 1_200_000);
});
