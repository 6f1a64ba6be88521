// `make demo` as a user runs it: the demo command in a process of its own, checked from the
// outside through the kubeconfig it prints, the keys it reads, its exit status, and what is
// left listening once it is gone.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "@jest/globals";
import { KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { kubectl } from "../chart/helm.js";
import { waitFor } from "../support/wait-for.js";
import { readinessOf, uniquePodCidr, type Obj } from "../integration/support/cluster.js";
import { repoRoot } from "../support/paths.js";

interface Demo {
  child: ChildProcess;
  dir: string;
  output(): string;
  exited: Promise<number | null>;
}

const running: Demo[] = [];

function startDemo(args: string[], podCidr = uniquePodCidr()): Demo {
  const dir = mkdtempSync(join(tmpdir(), "hp-demo-"));
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: "" };
  delete env.HEALTHPROBE_LOG_LEVEL;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "hack", "demo", "main.ts"), "--pod-cidr", podCidr, "--dir", dir, ...args],
    {
      cwd: repoRoot,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let text = "";
  child.stdout!.on("data", (c: Buffer) => (text += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (text += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const demo = { child, dir, output: () => text, exited };
  running.push(demo);
  return demo;
}

afterEach(async () => {
  for (const d of running.splice(0)) {
    if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL");
    await d.exited;
    // A demo killed outright cannot stop its operator process: do it here.
    try {
      process.kill(operatorPid(d.dir), "SIGKILL");
    } catch {
      // Not started, or already gone.
    }
    rmSync(d.dir, { recursive: true, force: true });
  }
});

function apiOf(dir: string): { api: KubernetesObjectApi; server: string } {
  const kc = new KubeConfig();
  kc.loadFromFile(join(dir, "kubeconfig"));
  return { api: KubernetesObjectApi.makeApiClient(kc), server: kc.getCurrentCluster()!.server };
}

function operatorPid(dir: string): number {
  const first = readFileSync(join(dir, "operator.log"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("{"));
  return (JSON.parse(first!) as { pid: number }).pid;
}

function refuses(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once("connect", () => (s.destroy(), resolve(false)));
    s.once("error", () => resolve(true));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Nothing the demo started is left: the operator process, the API server, the pod servers. */
async function expectAllStopped(d: Demo, podIPs: readonly string[]): Promise<void> {
  const url = new URL(apiOf(d.dir).server);
  expect(await refuses(url.hostname, Number(url.port))).toBe(true);
  expect(alive(operatorPid(d.dir))).toBe(false);
  for (const ip of podIPs) expect(await refuses(ip, 8080)).toBe(true);
}

async function podsOf(api: KubernetesObjectApi): Promise<Obj[]> {
  const pods = ((await api.list("v1", "Pod", "demo")).items ?? []) as Obj[];
  const created = (p: Obj) => new Date(p.metadata!.creationTimestamp!).getTime();
  return pods.sort((a, b) => created(a) - created(b) || a.metadata!.name!.localeCompare(b.metadata!.name!));
}

async function readiness(api: KubernetesObjectApi): Promise<Map<string, boolean>> {
  return readinessOf(
    ((
      await api.list(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "demo",
        undefined,
        undefined,
        undefined,
        undefined,
        "kubernetes.io/service-name=web",
      )
    ).items ?? []) as Obj[],
  );
}

async function policyOf(api: KubernetesObjectApi): Promise<Obj> {
  return (await api.read({
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name: "web", namespace: "demo" },
  })) as Obj;
}

async function healthyCount(api: KubernetesObjectApi): Promise<number | undefined> {
  return (await policyOf(api)).status?.healthy;
}

describe("make demo", () => {
  it("the headless tour observes every step's effect in the API, exits 0 and leaves nothing running", async () => {
    const demo = startDemo(["--headless", "--scenario", "tour"]);
    const code = await demo.exited;
    const out = demo.output();
    expect({ code, tail: out.slice(-3000) }).toEqual({
      code: 0,
      tail: expect.stringContaining("Tour passed: 8 of 8 steps observed in the API"),
    });
    for (const title of [
      "One pod fails: it is drained",
      "Two more fail: the cap keeps one in rotation",
      "All five fail: the Service fails open",
      "Three recover, two stay sick: they are drained again",
      "A pod stays sick past its window: it is replaced",
      "The next one is held by the hourly budget",
      "Every pod fails while it is due: the mass-failure breaker pauses replacement",
      "All recover: back in rotation, the pause ends by itself",
    ]) {
      expect(out).toContain(title);
    }
    expect(out.match(/✓ after/g)).toHaveLength(8);
    expect(out).toMatch(
      /ReplacementBlocked=True \(MassFailure\): 1 due replacement is waiting\. web-\w+: 5 of 5 targets \(100%\) are Unhealthy, above pauseAboveUnhealthyPercent=50/,
    );
    expect(out).toMatch(
      /ReplacementBlocked=True \(Budget\): 1 due replacement is waiting\. web-\w+: hourly budget of policy demo\/web used 1\/1, next slot \S+Z — Event: "1 due replacement is waiting\. web-\w+: .*next slot in \d+m\d\ds \(\S+Z\)"/,
    );
    expect(out).toContain("demo stopped.");
    await expectAllStopped(demo, []);
  }, 300_000);

  it("the live view: a number key breaks that pod until it is drained, h heals it, q quits and stops everything", async () => {
    const demo = startDemo(["--plain"]);
    await waitFor(() => demo.output().includes("keys  1-5 break/heal that pod"), {
      timeoutMs: 60_000,
      what: "the first frame of the live view",
    });
    const { api } = apiOf(demo.dir);
    const pods = await podsOf(api);
    expect(pods).toHaveLength(5);
    const first = pods[0]!.metadata!.name!;
    await waitFor(
      async () => (await healthyCount(api)) === 5 && [...(await readiness(api)).values()].filter(Boolean).length === 5,
      { timeoutMs: 60_000, what: "all 5 pods Healthy and in rotation" },
    );

    demo.child.stdin!.write("1");
    await waitFor(async () => (await readiness(api)).get(first) === false, {
      timeoutMs: 60_000,
      what: `${first} drained after key 1`,
    });
    // The footer's kubectl line works against the demo as printed.
    const table = await kubectl(["get", "hpp", "-n", "demo", "-o", "wide"], join(demo.dir, "kubeconfig"));
    // Wide: Unhealthy 1, Unknown 0, Reconciled, Degraded, not fail-open, within the cap, nothing
    // blocked, and SHARD empty (the demo runs one replica, without shards).
    expect(table.stdout).toMatch(
      /^web\s+web\s+5\s+4\s+1\s+0\s+True\s+\S+\s+1\s+0\s+Reconciled\s+True\s+False\s+False\s+NotBlocked\s*$/m,
    );
    await waitFor(() => demo.output().includes(`${first} now answers HTTP 503`), { what: "the notice of the key" });
    // As the README's "try next" says: the Events, also in describe.
    const kubeconfig = join(demo.dir, "kubeconfig");
    const events = (await kubectl(["get", "events", "-n", "demo"], kubeconfig)).stdout;
    // One clause per note: what happened, then why, without the verdict's own "drained:".
    expect(events).toMatch(
      new RegExp(
        `Normal\\s+Drained\\s+pod/${first}\\s+pod ${first} drained from the Service: longest unhealthy, 1 of 2 allowed`,
      ),
    );
    expect(events).not.toContain("Service: drained:");
    expect((await kubectl(["describe", "hpp", "web", "-n", "demo"], kubeconfig)).stdout).toMatch(
      new RegExp(`Normal\\s+Drained\\s+\\S+\\s+healthprobe.io/operator\\s+pod ${first} drained`),
    );

    demo.child.stdin!.write("h");
    await waitFor(async () => (await readiness(api)).get(first) === true, {
      timeoutMs: 60_000,
      what: `${first} back in rotation after key h`,
    });

    demo.child.stdin!.write("q");
    expect(await demo.exited).toBe(0);
    await expectAllStopped(
      demo,
      pods.map((p) => p.status.podIP as string),
    );
  }, 180_000);

  it("the gate scenario: an ordinary Service whose pods carry the gate; a broken pod leaves the built-in slices through its Ready, and comes back", async () => {
    const demo = startDemo(["--plain", "--scenario", "gate"]);
    await waitFor(() => demo.output().includes("keys  1-5 break/heal that pod"), {
      timeoutMs: 60_000,
      what: "the first frame of the live view",
    });
    const { api } = apiOf(demo.dir);
    const pods = await podsOf(api);
    const first = pods[0]!.metadata!.name!;
    await waitFor(
      async () => (await healthyCount(api)) === 5 && [...(await readiness(api)).values()].filter(Boolean).length === 5,
      { timeoutMs: 60_000, what: "all 5 pods Healthy and ready in the built-in slices" },
    );
    const service = (await api.read({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "demo" },
    })) as Obj;
    expect(service.spec?.selector).toEqual({ app: "web" });

    demo.child.stdin!.write("1");
    await waitFor(async () => (await readiness(api)).get(first) === false, {
      timeoutMs: 60_000,
      what: `${first} out of the built-in slices after key 1`,
    });
    const pod = (await podsOf(api)).find((p) => p.metadata!.name === first)!;
    expect(pod.status.conditions.find((c: { type: string }) => c.type === "healthprobe.io/ready")).toMatchObject({
      status: "False",
      reason: "Unhealthy",
    });

    demo.child.stdin!.write("h");
    await waitFor(async () => (await readiness(api)).get(first) === true, {
      timeoutMs: 60_000,
      what: `${first} back after key h`,
    });
    demo.child.stdin!.write("q");
    expect(await demo.exited).toBe(0);
  }, 180_000);

  it("the live view: keys follow the pod, a deleted pod's server stops, its replacement shows as new, and a notice says when its pod is gone", async () => {
    const demo = startDemo(["--plain"]);
    await waitFor(() => demo.output().includes("keys  1-5 break/heal that pod"), {
      timeoutMs: 60_000,
      what: "the first frame of the live view",
    });
    const { api } = apiOf(demo.dir);
    const kubeconfig = join(demo.dir, "kubeconfig");
    const pods = await podsOf(api);
    const [first, second, third] = pods.map((p) => ({
      name: p.metadata!.name as string,
      ip: p.status.podIP as string,
    }));
    await waitFor(async () => (await healthyCount(api)) === 5, { timeoutMs: 60_000, what: "all 5 pods Healthy" });

    // As the README's "try next" says: delete a pod; its ReplicaSet recreates it.
    expect((await kubectl(["delete", "pod", first!.name, "-n", "demo"], kubeconfig)).stdout).toContain(
      `pod "${first!.name}" deleted`,
    );
    await waitFor(
      async () =>
        (await podsOf(api)).length === 5 && !(await podsOf(api)).some((p) => p.metadata!.name === first!.name),
      { timeoutMs: 60_000, what: "the replacement pod, the deleted one gone" },
    );
    await waitFor(() => refuses(first!.ip, 8080), {
      timeoutMs: 10_000,
      what: `the server of deleted pod ${first!.name} to stop`,
    });
    const replacement = (await podsOf(api))
      .map((p) => p.metadata!.name as string)
      .find((n) => !pods.some((p) => p.metadata!.name === n))!;
    await waitFor(() => new RegExp(`^ *\\d\\s+${replacement} new\\s`, "m").test(demo.output()), {
      what: `${replacement} listed as new`,
    });

    // Key 2 still breaks the pod it broke before the first one went, not the next row up.
    demo.child.stdin!.write("2");
    await waitFor(async () => (await readiness(api)).get(second!.name) === false, {
      timeoutMs: 60_000,
      what: `${second!.name} drained after key 2`,
    });
    expect((await readiness(api)).get(third!.name)).toBe(true);

    // The notice follows its pod: once that pod is deleted, it says so instead of a stale "now answers".
    await kubectl(["delete", "pod", second!.name, "-n", "demo"], kubeconfig);
    await waitFor(() => demo.output().includes(`> ${second!.name} is gone: key 2 is free until a new pod takes it`), {
      timeoutMs: 60_000,
      what: "the notice that the pod is gone",
    });
    await waitFor(() => refuses(second!.ip, 8080), {
      timeoutMs: 10_000,
      what: `the server of deleted pod ${second!.name} to stop`,
    });
    expect(await refuses(third!.ip, 8080)).toBe(false);

    demo.child.stdin!.write("q");
    expect(await demo.exited).toBe(0);
  }, 180_000);

  it("headless, it serves kubectl until Ctrl-C (SIGINT), which stops the operator, the pod servers and the API server", async () => {
    const podCidr = uniquePodCidr();
    const demo = startDemo(["--headless"], podCidr);
    await waitFor(() => demo.output().includes("running until Ctrl-C"), { timeoutMs: 60_000, what: "the demo to run" });
    // A second demo on the same pod range cannot serve its pods: it says so and stops at once.
    const second = startDemo(["--headless"], podCidr);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`is another demo using --pod-cidr ${podCidr}?`);
    const { api } = apiOf(demo.dir);
    const kubeconfig = join(demo.dir, "kubeconfig");
    // The README's "try next": an invalid edit is reported naming the field (the CRD's CEL rule, which a
    // real API server enforces, is not run by the API test server: the operator's own check reports it);
    // scaling the ReplicaSet adds probed targets.
    const patchTimeout = (seconds: number) =>
      kubectl(
        [
          "patch",
          "hpp",
          "web",
          "-n",
          "demo",
          "--type",
          "merge",
          "-p",
          `{"spec":{"probe":{"timeoutSeconds":${seconds}}}}`,
        ],
        kubeconfig,
      );
    expect((await patchTimeout(5)).code).toBe(0);
    await waitFor(
      async () => {
        const ready = (await policyOf(api)).status?.conditions?.find((c: { type: string }) => c.type === "Ready");
        return ready?.reason === "InvalidSpec" && /spec\.probe\.timeoutSeconds/.test(ready.message) ? ready : undefined;
      },
      { timeoutMs: 30_000, what: "Ready=False InvalidSpec naming spec.probe.timeoutSeconds" },
    );
    expect((await patchTimeout(1)).code).toBe(0);
    const scaled = await kubectl(
      ["patch", "rs", "web", "-n", "demo", "--type", "merge", "-p", '{"spec":{"replicas":6}}'],
      kubeconfig,
    );
    expect(scaled.stdout).toContain("replicaset.apps/web patched");
    await waitFor(
      async () => (await healthyCount(api)) === 6 && [...(await readiness(api)).values()].filter(Boolean).length === 6,
      { timeoutMs: 60_000, what: "the sixth pod Healthy and in rotation" },
    );
    const ips = (await podsOf(api)).map((p) => p.status.podIP as string);
    expect(ips).toHaveLength(6);
    demo.child.kill("SIGINT");
    expect(await demo.exited).toBe(130);
    expect(demo.output()).toContain("demo stopped.");
    await expectAllStopped(demo, ips);
  }, 120_000);

  it("refuses a bad flag with exit status 2, naming it", async () => {
    const demo = startDemo(["--scenario", "grand-tour"]);
    expect(await demo.exited).toBe(2);
    expect(demo.output()).toContain('--scenario: must be "tour" or "gate", got "grand-tour"');
  });
});
