import { describe, it, expect } from "@jest/globals";
import { readFileSync, readdirSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { API_VERSION, KIND } from "./group.js";
import { parsePolicySpec } from "./parse-policy.js";
import type { HealthProbePolicySpec } from "./policy-schema.js";

const examplesDir = new URL("../../../examples/", import.meta.url);

function load(file: string): {
  service: Record<string, any>;
  policy: Record<string, any>;
  spec: HealthProbePolicySpec;
} {
  const docs = parseAllDocuments(readFileSync(new URL(file, examplesDir), "utf8"));
  if (!Array.isArray(docs)) throw new Error(`${file}: not a YAML stream`);
  for (const d of docs) if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message}`);
  const objects = docs.map((d) => d.toJS() as Record<string, any>);
  const service = objects.find((o) => o.kind === "Service");
  const policy = objects.find((o) => o.kind === KIND);
  if (!service || !policy) throw new Error(`${file}: needs a Service and a ${KIND}`);
  const parsed = parsePolicySpec(policy.spec);
  if (!parsed.ok) throw new Error(`${file}: ${parsed.message}`);
  return { service, policy, spec: parsed.spec };
}

const presets: Array<[string, (s: HealthProbePolicySpec) => unknown, unknown]> = [
  [
    "app-service-defaults.yaml",
    (s) => [
      s.probe.periodSeconds,
      s.probe.timeoutSeconds,
      s.probe.method,
      s.probe.match.statusCodes,
      s.evaluation.failureThreshold,
      s.evaluation.successThreshold,
      s.drain.maxUnhealthyPercent,
      s.replacement.after,
      s.replacement.maxPerHour,
      s.replacement.maxPerDay,
      s.replacement.method,
      s.dryRun,
    ],
    [60, 60, "GET", ["200-299"], 10, 1, 50, "1h", 1, 3, "Evict", false],
  ],
  [
    "application-gateway.yaml",
    (s) => [
      s.probe.periodSeconds,
      s.probe.timeoutSeconds,
      s.evaluation.failureThreshold,
      s.probe.match.statusCodes,
      s.evaluation.window,
    ],
    [30, 30, 3, ["200-399"], undefined],
  ],
  [
    "front-door.yaml",
    (s) => [s.probe.method, s.probe.match.statusCodes, s.evaluation.window, s.probe.match.bodyContains],
    ["HEAD", ["200"], { sampleSize: 4, successfulSamplesRequired: 2 }, undefined],
  ],
  [
    "grpc.yaml",
    (s) => [
      s.probe.type,
      s.probe.grpc,
      s.probe.path,
      s.probe.match.maxLatencyMilliseconds,
      s.probe.timeoutSeconds,
      s.evaluation.failureThreshold,
    ],
    ["GRPC", { service: "shop.Cart" }, undefined, 500, 5, 3],
  ],
];

describe("examples", () => {
  it("cover every file in examples/", () => {
    const files = readdirSync(examplesDir)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    expect(files).toEqual(presets.map(([f]) => f).sort());
  });

  it.each(presets)("%s is a valid policy with the preset's values", (file, pick, expected) => {
    const { spec } = load(file);
    expect(pick(spec)).toEqual(expected);
  });

  it.each(presets)("%s pairs the policy with a selector-less Service of the same name", (file) => {
    const { service, policy, spec } = load(file);
    expect(policy.apiVersion).toBe(API_VERSION);
    expect(service.apiVersion).toBe("v1");
    expect(service.spec?.selector).toBeUndefined();
    expect(service.spec?.ports?.length).toBeGreaterThan(0);
    expect(spec.serviceName).toBe(service.metadata?.name);
    expect(policy.metadata?.name).toBe(service.metadata?.name);
  });
});
