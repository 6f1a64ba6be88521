// The operator's image as the chart's defaults name it, built from the Dockerfile by
// hack/images/build-operator.sh (make image; an unchanged tree reuses the cached archive), for the
// suites that import it into a real node's containerd and install the chart.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { chartDir } from "../chart/helm.js";
import { repoRoot } from "./paths.js";

/** The image the chart's defaults name: values.yaml's image.repository and Chart.yaml's appVersion. */
export function chartImage(): string {
  const values = parse(readFileSync(join(chartDir, "values.yaml"), "utf8")) as { image: { repository: string } };
  const chart = parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8")) as { appVersion: string };
  return `${values.image.repository}:${chart.appVersion}`;
}

/** Builds `image` (default: chartImage()) and returns the path of its OCI archive. */
export function buildOperatorImage(image = chartImage()): string {
  const out = spawnSync("bash", [join(repoRoot, "hack", "images", "build-operator.sh"), image], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  if (out.status !== 0)
    throw new Error(`building the operator image failed (${out.status ?? out.signal}):\n${out.stderr.slice(-4000)}`);
  return out.stdout.trim().split("\n").pop()!;
}
