// The real node: a real kubelet and kube-proxy on containerd in a network namespace of the run's
// own. Needs root, Go (the binaries are built on first use) and the machine's containerd, runc and
// CNI plugins, and takes minutes: it runs only with HEALTHPROBE_TEST_NODE=1.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { startRealNode, type RealNodeCluster } from "../../hack/control-plane/real-node/cluster.js";
import { SERVICE_CIDR } from "../../hack/control-plane/real-node/components.js";
import { freePort } from "../../hack/control-plane/processes.js";
import { waitFor } from "../support/wait-for.js";
import { leftovers, traceRun } from "./leftovers.js";
import { WORKLOAD_IMAGE } from "../support/workload-control.js";

const run = promisify(execFile);
const enabled = process.env.HEALTHPROBE_TEST_NODE === "1";
const kubectl = join(process.cwd(), ".tools", "bin", "kubectl");

// Skipped unless asked for: it needs root, builds kubelet and kube-proxy, and takes minutes.
const suite = enabled ? describe : describe.skip;

const ipInCidr = (ip: string, cidr: string): boolean => {
  const [base, bits] = cidr.split("/");
  const n = (a: string): number => a.split(".").reduce((acc, o) => acc * 256 + Number(o), 0);
  const mask = 2 ** 32 - 2 ** (32 - Number(bits));
  return (n(ip) & mask) >>> 0 === (n(base!) & mask) >>> 0;
};

/** A node script: `count` GETs of `url`, each on a new connection; prints the bodies as JSON. */
const clientScript = (url: string, count: number): string => `
const http = require("node:http");
const get = () => new Promise((resolve, reject) => {
  const req = http.get(${JSON.stringify(url)}, { agent: false, timeout: 3000 }, (res) => {
    let body = "";
    res.on("data", (d) => (body += d));
    res.on("end", () => resolve(body.trim()));
  });
  req.on("timeout", () => req.destroy(new Error("timed out")));
  req.on("error", reject);
});
(async () => {
  const out = [];
  for (let i = 0; i < ${count}; i++) out.push(await get());
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { console.error(err.message); process.exit(1); });
`;

/** What the kubelet would change on the machine if it could (see kubelet-mounts.ts): tunables and fixed paths. */
const machineState = (): string[] => [
  ...[
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
  ].map((k) => `${k}=${readFileSync(`/proc/sys/${k}`, "utf8").trim()}`),
  ...["/var/lib/kubelet/device-plugins/kubelet.sock", "/var/log/containers"].map(
    (p) => `${p} ${existsSync(p) ? "exists" : "missing"}`,
  ),
];

/** The pid of the workload server of pod `name` (its POD_NAME). */
function workloadPid(name: string): number {
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (
        readFileSync(`/proc/${p}/cmdline`, "utf8").startsWith("/workload") &&
        readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(`POD_NAME=${name}`)
      )
        return Number(p);
    } catch {
      // Gone, or not ours to read.
    }
  }
  throw new Error(`no workload process of pod ${name}`);
}

/** The CNI network namespace (cni-…) of the node's pod with address `ip`. */
async function podNetns(nodeNs: string, ip: string): Promise<string> {
  for (const ns of (await run("ip", ["netns", "list"])).stdout
    .split("\n")
    .map((l) => l.split(" ")[0]!)
    .filter((n) => n.startsWith("cni-"))) {
    const addrs = await run("ip", ["-n", ns, "-o", "addr", "show"]).then(
      (r) => r.stdout,
      () => "",
    );
    const links = await run("ip", ["-n", ns, "link", "show"]).then(
      (r) => r.stdout,
      () => "",
    );
    if (addrs.includes(` ${ip}/`) && links.includes(`link-netns ${nodeNs}`)) return ns;
  }
  throw new Error(`no network namespace of ${nodeNs}'s pods holds ${ip}`);
}

suite("a real node (kubelet, containerd, CNI bridge, kube-proxy) in a network namespace of its own", () => {
  let node: RealNodeCluster;
  let core: CoreV1Api;
  let scratch: string;
  let kubeconfig: string;
  const k = (args: string[]) =>
    run(kubectl, ["--kubeconfig", kubeconfig, "--cache-dir", join(scratch, "cache"), ...args], { encoding: "utf8" });

  const runPod = async (
    name: string,
    extra: { labels?: Record<string, string>; secret?: string } = {},
  ): Promise<V1Pod> => {
    const mount = extra.secret ? { volumeMounts: [{ name: "secret", mountPath: "/secret" }] } : {};
    await core.createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name, labels: extra.labels ?? { app: "workload" } },
        spec: {
          // The control plane has no kube-scheduler: the pod is bound to the node directly.
          nodeName: node.nodeName,
          containers: [
            {
              name: "workload",
              image: WORKLOAD_IMAGE,
              imagePullPolicy: "Never",
              env: [{ name: "POD_NAME", value: name }],
              ...mount,
            },
          ],
          volumes: extra.secret ? [{ name: "secret", secret: { secretName: extra.secret } }] : [],
          // The ServiceAccount token is not needed; skipping it keeps the pod independent of the token controller.
          automountServiceAccountToken: false,
        },
      },
    });
    return waitFor(
      async () => {
        const p = await core.readNamespacedPod({ name, namespace: "default" });
        return p.status?.phase === "Running" && p.status.podIP ? p : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500, what: `pod ${name} to run (kubelet log: ${node.dir}/kubelet.log)` },
    );
  };

  let machineBefore: string[];

  beforeAll(async () => {
    machineBefore = machineState();
    node = await startRealNode();
    scratch = mkdtempSync(join(tmpdir(), "real-node-test-"));
    kubeconfig = join(scratch, "kubeconfig");
    writeFileSync(kubeconfig, node.kubeconfig(), { mode: 0o600 });
    const kc = new KubeConfig();
    kc.loadFromString(node.kubeconfig());
    core = kc.makeApiClient(CoreV1Api);
  }, 900_000);

  afterAll(async () => {
    await node?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  it("registers the node as Ready with the real kubelet's version and containerd as its runtime", async () => {
    const n = await core.readNode({ name: node.nodeName });
    expect(n.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    expect(n.status?.nodeInfo?.kubeletVersion).toBe("v1.37.2");
    expect(n.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\//);
  });

  it("runs a workload pod on the pod network, with its logs, exec and port-forward through the real kubectl", async () => {
    const pod = await runPod("workload");
    expect(ipInCidr(pod.status!.podIP!, node.namespace.podCidr)).toBe(true);
    await waitFor(async () => (await k(["logs", "workload"])).stdout.includes("pod workload"), {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: "the workload's log",
    });
    // The image holds only /workload: asking it for its flags proves exec reaches the container.
    const help = await k(["exec", "workload", "--", "/workload", "-help"]).catch(
      (err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? "", stderr: err.stderr ?? "" }),
    );
    expect(`${help.stdout}${help.stderr}`).toContain("pod-name");
    // port-forward on the host's loopback: kubectl, the API server, the kubelet and containerd's stream server.
    const port = await freePort();
    const forward = spawn(kubectl, ["--kubeconfig", kubeconfig, "port-forward", "pod/workload", `${port}:8080`], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const body = await waitFor(
        () =>
          fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) }).then(
            (r) => r.text(),
            () => undefined,
          ),
        {
          timeoutMs: 30_000,
          intervalMs: 250,
          what: "the workload through kubectl port-forward",
        },
      );
      expect(body.trim()).toBe("workload");
    } finally {
      forward.kill("SIGTERM");
    }
  }, 240_000);

  it("routes a Service's ClusterIP to both pods through kube-proxy, from the node's namespace and from a pod's", async () => {
    // Both pods run before the Service exists, so kube-proxy's first rules hold both.
    await runPod("workload-2");
    const svc = await core.createNamespacedService({
      namespace: "default",
      body: {
        metadata: { name: "workload" },
        spec: { selector: { app: "workload" }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const ip = svc.spec!.clusterIP!;
    expect(ipInCidr(ip, SERVICE_CIDR)).toBe(true);
    // The ClusterIP exists only in kube-proxy's rules inside the node's namespace.
    const body = await waitFor(
      () => node.namespace.exec(process.execPath, ["-e", clientScript(`http://${ip}/`, 1)]).catch(() => undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: `${ip}:80 to answer inside ${node.namespace.name} (kube-proxy log: ${node.dir}/kube-proxy.log)`,
      },
    );
    expect(["workload", "workload-2"]).toContain((JSON.parse(body) as string[])[0]);
    // A client in workload's own network namespace: a new connection per request, so kube-proxy
    // picks a pod each time, workload itself (hairpin through the bridge) or workload-2.
    const netns = await podNetns(
      node.namespace.name,
      (await core.readNamespacedPod({ name: "workload", namespace: "default" })).status!.podIP!,
    );
    const answers = JSON.parse(
      (
        await run("nsenter", [
          `--net=/run/netns/${netns}`,
          "--",
          process.execPath,
          "-e",
          clientScript(`http://${ip}/`, 20),
        ])
      ).stdout,
    ) as string[];
    expect(new Set(answers)).toEqual(new Set(["workload", "workload-2"]));
    // The machine's own namespace has no kube-proxy rules.
    const hostRules = await run("iptables-save", []).then(
      (r) => r.stdout,
      () => "",
    );
    expect(hostRules).not.toContain(ip);
  }, 240_000);

  it("mounts a Secret volume that the container sees, and leaves the machine's kernel tunables and the kubelet's fixed paths as they were", async () => {
    await core.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "greeting" }, stringData: { greeting: "hello from the kubelet" } },
    });
    await runPod("with-secret", { labels: { app: "other" }, secret: "greeting" });
    // The kubelet mounts the volume (a tmpfs) in a mount namespace of its own; the container is
    // started by containerd in the machine's, so this reads it through the container's root.
    const pid = workloadPid("with-secret");
    expect(readFileSync(`/proc/${pid}/root/secret/greeting`, "utf8")).toBe("hello from the kubelet");
    expect(machineState()).toEqual(machineBefore);
  }, 240_000);

  it("leaves no process, namespace, mount, cgroup, veth or containerd file behind after stop", async () => {
    const trace = await traceRun(node.dir, node.namespace.name);
    expect(trace.ids.size).toBeGreaterThan(0);
    await node.stop();
    expect(await leftovers(trace)).toEqual([]);
  }, 120_000);
});
