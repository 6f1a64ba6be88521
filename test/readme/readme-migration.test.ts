// The README's "Moving an existing Service to the operator", run line by line with the real
// kubectl against the API test server and the operator: a Service with a selector and the
// slice Kubernetes' own controller wrote for it becomes the operator's, with the old slice
// serving until the operator's is there, and goes back. (The test server has no built-in
// EndpointSlice controller: the slice it would have written is created by hand.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { aPolicy, aReplicaSet, aService, podIP, readinessOf } from "../integration/support/cluster.js";
import { useBed } from "../integration/support/test-bed.js";
import { kubectlBin, repoRoot } from "../support/paths.js";
import { waitFor } from "../support/wait-for.js";
import { sh } from "../support/shell.js";

const OURS = "endpointslice.kubernetes.io/managed-by=healthprobe-operator.healthprobe.io";
const BUILT_IN = "endpointslice-controller.k8s.io";

/** The kubectl lines of the README's two blocks: the move, and the way back. */
function migrationLines(): { steps: string[]; back: string[] } {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(
    readme.indexOf("### Moving an existing Service to the operator"),
    readme.indexOf("### NetworkPolicy"),
  );
  const blocks = section
    .split("```sh")
    .slice(1)
    .map((b) => b.slice(0, b.indexOf("```")));
  const lines = (block: string | undefined) =>
    (block ?? "")
      .split("\n")
      .filter((l) => l.startsWith("kubectl "))
      .map((l) => l.replace(/\s+#.*$/, ""));
  return { steps: lines(blocks[0]), back: lines(blocks[1]) };
}

const bed = useBed({ per: "file" });
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hp-readme-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the README's move of an existing Service", () => {
  it("runs as written: the policy waits for the selector to go, takes the Service over, and gives it back", async () => {
    const { cluster, farm } = bed;
    const ns = cluster.namespace;
    await cluster.create(aService("web", ns, { selector: { app: "web" } }));
    await cluster.create(aReplicaSet("web", ns, 2));
    const pods = await waitFor(
      async () => {
        const list = await cluster.list("v1", "Pod");
        return list.length === 2 && list.every((p) => p.status?.podIP) ? list : undefined;
      },
      { what: "2 pods with IPs" },
    );
    for (const p of pods) await farm.serve(await podIP(cluster, p.metadata!.name!));
    // Kubernetes' EndpointSlice controller lists both pods while the Service has its selector.
    await waitFor(
      async () => {
        const builtIn = await cluster.list(
          "discovery.k8s.io/v1",
          "EndpointSlice",
          ns,
          `endpointslice.kubernetes.io/managed-by=${BUILT_IN}`,
        );
        return [...readinessOf(builtIn).values()].filter(Boolean).length === 2;
      },
      { what: "the built-in controller's slice" },
    );
    await bed.startOperator();

    const kubeconfig = join(dir, "kubeconfig");
    cluster.server.writeKubeconfig(kubeconfig);
    writeFileSync(join(dir, "policy.yaml"), stringify(aPolicy("web", ns)));
    const run = async (line: string) => {
      const r = await sh(
        line
          .replace(/^kubectl /, `${kubectlBin} --kubeconfig ${kubeconfig} -n ${ns} `)
          .replace("policy.yaml", join(dir, "policy.yaml")),
      );
      expect({ line, code: r.code, stderr: r.stderr }).toEqual({ line, code: 0, stderr: "" });
      return r.stdout;
    };
    const ready = async () => {
      const policy = await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
      return (policy?.status?.conditions ?? []).find((c: { type: string }) => c.type === "Ready") as
        { status: string; reason: string } | undefined;
    };
    const ourSlices = () => cluster.list("discovery.k8s.io/v1", "EndpointSlice", ns, OURS);
    const { steps, back } = migrationLines();
    expect(steps).toHaveLength(4);

    await run(steps[0]!);
    await waitFor(async () => (await ready())?.reason === "ServiceHasSelector", {
      what: "Ready=False, ServiceHasSelector",
    });
    expect(await ourSlices()).toEqual([]);

    await run(steps[1]!);
    await waitFor(async () => (await ready())?.status === "True", {
      what: "the policy Ready once the selector is gone",
    });
    await waitFor(async () => [...readinessOf(await ourSlices()).values()].filter(Boolean).length === 2, {
      what: "both pods ready in the operator's slices",
    });
    expect(await run(steps[2]!)).toMatch(/^web\s+web\s+2\s+/m);

    // Until it is deleted, the built-in slice keeps listing both pods beside the operator's.
    expect(
      readinessOf(
        await cluster.list(
          "discovery.k8s.io/v1",
          "EndpointSlice",
          ns,
          `endpointslice.kubernetes.io/managed-by=${BUILT_IN}`,
        ),
      ),
    ).toEqual(new Map(pods.map((p) => [p.metadata!.name!, true])));
    await run(steps[3]!);
    const left = await cluster.list("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=web");
    expect(left.map((s) => s.metadata!.labels!["endpointslice.kubernetes.io/managed-by"])).toEqual(
      left.map(() => "healthprobe-operator.healthprobe.io"),
    );
    expect(left.length).toBeGreaterThan(0);

    expect(back).toHaveLength(2);
    await run(back[0]!);
    await waitFor(async () => (await ready())?.reason === "ServiceHasSelector", {
      what: "Ready=False, ServiceHasSelector, once the selector is back",
    });
    await run(back[1]!);
    await waitFor(async () => (await ourSlices()).length === 0, {
      what: "the operator's slices deleted with the policy",
    });
  }, 120_000);
});
