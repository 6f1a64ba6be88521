// The README's commands that run without a cluster, run as a reader would paste them: the probe
// command piped into a JSON parser, `helm template`, and `make image` (with the container
// engine replaced by `echo`, so that no image is built here).
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { helm, parseManifests } from "../chart/helm.js";
import { repoRoot } from "../support/paths.js";
import { sh } from "../support/shell.js";

const readme = readFileSync(`${repoRoot}/README.md`, "utf8");

/** The one README line that starts with `prefix` (inside a code block), without its comment. */
function readmeLine(prefix: string): string {
  const lines = readme.split("\n").filter((l) => l.startsWith(prefix));
  expect(lines).toHaveLength(1);
  return lines[0]!.replace(/\s+#.*$/, "");
}

// Parses every line of its stdin as JSON, printing them back as one array: fails on a line that is not JSON.
const JSON_LINES = `node -e 'let t="";process.stdin.on("data",(c)=>t+=c).on("end",()=>console.log(JSON.stringify(t.trim().split("\\n").map((l)=>JSON.parse(l)))))'`;

describe("the README's probe command", () => {
  let server: Server;
  let port: number;
  const answers: number[] = [200, 200, 503, 200];
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(answers.shift() ?? 200, { connection: "close" });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("prints only JSON lines, which pipe into a JSON parser: each probe, then the window's verdict", async () => {
    const line = readmeLine("npm run -s probe -- ");
    expect(line).toContain("--address 10.1.2.3 --port 8080");
    const command = `${line.replace("--address 10.1.2.3 --port 8080", `--address 127.0.0.1 --port ${port}`)} --interval 50ms`;
    const r = await sh(`${command} | ${JSON_LINES}`);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const parsed = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(parsed.map((p) => p.success ?? p.verdict)).toEqual([true, true, false, true, "Healthy"]);
    expect(parsed.at(-1)).toEqual({ verdict: "Healthy", reason: "3 of the last 4 probes succeeded, 2 required" });
  });
});

describe("the README's image and chart commands", () => {
  it("helm template renders the image `make image` builds", async () => {
    const line = readmeLine("`helm template ").replace(/^`|`.*$/g, "");
    const r = helm(line.split(/\s+/).slice(1));
    expect(r.code).toBe(0);
    const deployment = parseManifests(r.stdout).find((m) => m.kind === "Deployment") as unknown as {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    const built = await sh("make -s image CONTAINER_ENGINE=echo");
    expect(built.stdout.trim()).toBe(`build -t ${deployment.spec.template.spec.containers[0]!.image} .`);
    expect(deployment.spec.template.spec.containers[0]!.image).toBe("ghcr.io/healthprobe/healthprobe-operator:0.1.0");
  });

  it("make image names the image for one's own registry with IMAGE=", async () => {
    const line = readmeLine("make image IMAGE=");
    expect((await sh(`${line.replace("make image", "make -s image CONTAINER_ENGINE=echo")}`)).stdout.trim()).toBe(
      "build -t registry.example.com/team/healthprobe-operator:0.1.0 .",
    );
  });

  it("make image without docker, podman or buildah says so", async () => {
    // An empty PATH hides buildah; the recipe's shell and make itself are named by path.
    const r = await sh('env PATH=/nonexistent "$(command -v make)" -s image CONTAINER_ENGINE=');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("make image: no docker or podman engine answers and buildah is not on PATH");
  });

  it("the chart's metadata and image name one organisation", () => {
    const chart = readFileSync(`${repoRoot}/charts/healthprobe-operator/Chart.yaml`, "utf8");
    const values = readFileSync(`${repoRoot}/charts/healthprobe-operator/values.yaml`, "utf8");
    const org = /github\.com\/([^/]+)\//.exec(chart)?.[1];
    expect(org).toBe("healthprobe");
    expect(values).toContain(`repository: ghcr.io/${org}/healthprobe-operator`);
  });
});
