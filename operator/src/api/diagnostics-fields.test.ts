import { describe, expect, it } from "@jest/globals";
import { parsePolicySpec } from "./parse-policy.js";

const base = { serviceName: "web", selector: { matchLabels: { app: "web" } }, probe: { port: 8080, path: "/healthz" } };

describe("spec.replacement.keepDiagnostics and diagnosticsRetention", () => {
  it("default to keeping diagnostics for 24h", () => {
    const parsed = parsePolicySpec(base);
    expect(parsed.ok && parsed.spec.replacement).toMatchObject({ keepDiagnostics: true, diagnosticsRetention: "24h" });
  });

  it.each(["1m", "90m", "720h"])("accept a retention of %s", (d) => {
    expect(parsePolicySpec({ ...base, replacement: { diagnosticsRetention: d } }).ok).toBe(true);
  });

  it.each([
    [
      "59s",
      'spec.replacement.diagnosticsRetention: Invalid value: "59s": diagnosticsRetention 59s: must be between 1m and 720h',
    ],
    [
      "721h",
      'spec.replacement.diagnosticsRetention: Invalid value: "721h": diagnosticsRetention 721h: must be between 1m and 720h',
    ],
    [
      "a day",
      'spec.replacement.diagnosticsRetention: Invalid value: "a day": must be a duration such as "24h", "90m" or "1h30m"',
    ],
  ])("refuse a retention of %s, naming the field", (d, message) => {
    const parsed = parsePolicySpec({ ...base, replacement: { diagnosticsRetention: d } });
    expect(parsed.ok ? "" : parsed.message).toBe(message);
  });
});
