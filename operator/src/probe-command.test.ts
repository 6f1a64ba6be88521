import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runProbeCommand } from "./probe-command.js";

let server: Server;
let port: number;
const seenAuth: Array<string | undefined> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seenAuth.push(req.headers.authorization);
    const status = req.url === "/fail" ? 503 : 200;
    res.writeHead(status, { "content-length": 7 });
    res.end("Healthy");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

function policyYaml(probe: string): string {
  return `apiVersion: v1
kind: Service
metadata: {name: web}
---
apiVersion: healthprobe.io/v1alpha1
kind: HealthProbePolicy
metadata: {name: web}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  probe:
${probe.replace(/^/gm, "    ")}
---
apiVersion: healthprobe.io/v1alpha1
kind: HealthProbePolicy
metadata: {name: ignored}
spec: {}
`;
}

async function run(args: string[], yaml: string) {
  const out: string[] = [];
  const err: string[] = [];
  const delays: number[] = [];
  const code = await runProbeCommand(args, {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    readFile: async () => yaml,
    delay: async (ms) => void delays.push(ms),
  });
  return { code, out, err, delays };
}

describe("the probe command", () => {
  it("probes the first policy in the file, once per count, and exits 0 when the last succeeded", async () => {
    const r = await run(
      ["--policy", "p.yaml", "--address", "127.0.0.1", "--count", "3", "--interval", "200ms"],
      policyYaml(`port: ${port}\npath: /ok\nmatch: {bodyContains: Healthy}`),
    );
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(4);
    for (const line of r.out.slice(0, 3)) {
      const j = JSON.parse(line);
      expect(Object.keys(j)).toEqual(["success", "statusCode", "latencyMs", "result"]);
      expect(j).toMatchObject({ success: true, statusCode: 200 });
      expect(j.result).toMatch(/^HTTP 200 in \d+ ms$/);
      // Whole milliseconds, the same number the result gives.
      expect(Number.isInteger(j.latencyMs)).toBe(true);
      expect(j.result).toBe(`HTTP 200 in ${j.latencyMs} ms`);
    }
    expect(JSON.parse(r.out[3]!)).toEqual({
      verdict: "Healthy",
      reason: "1 consecutive successes (successThreshold=1)",
    });
    expect(r.delays).toHaveLength(2);
    expect(r.delays.every((d) => d <= 200)).toBe(true);
  });

  it.each([
    [
      "Unknown until the window is full",
      ["--count", "3"],
      "/ok",
      { verdict: "Unknown", reason: "3 of the 4 samples the window needs: pass --count 4 or more" },
    ],
    [
      "Healthy once 2 of 4 succeed",
      ["--count", "4"],
      "/ok",
      { verdict: "Healthy", reason: "4 of the last 4 probes succeeded, 2 required" },
    ],
    [
      "Unhealthy when fewer than 2 of 4 succeed",
      ["--count", "4"],
      "/fail",
      { verdict: "Unhealthy", reason: "0 of the last 4 probes succeeded, 2 required (last: HTTP 503)" },
    ],
  ])(
    "with Front Door's window of 4/2, prints the verdict the policy would reach: %s",
    async (_name, extra, path, verdict) => {
      const yaml = policyYaml(`port: ${port}\npath: ${path}`).replace(
        "  probe:",
        "  evaluation: {window: {sampleSize: 4, successfulSamplesRequired: 2}}\n  probe:",
      );
      const r = await run(["--policy", "p.yaml", "--address", "127.0.0.1", ...extra], yaml);
      expect(JSON.parse(r.out.at(-1)!)).toEqual(verdict);
    },
  );

  it("says how far thresholds are from a verdict when the probes run reach none", async () => {
    const r = await run(
      ["--policy", "p.yaml", "--address", "127.0.0.1", "--count", "2"],
      policyYaml(`port: ${port}\npath: /fail`).replace("  probe:", "  evaluation: {failureThreshold: 3}\n  probe:"),
    );
    expect(JSON.parse(r.out.at(-1)!)).toEqual({
      verdict: "Unknown",
      reason: "0 consecutive successes of successThreshold=1, 2 consecutive failures of failureThreshold=3",
    });
  });

  it("prints several spec errors one per line, each field first", async () => {
    const r = await run(
      ["--policy", "p.yaml", "--address", "127.0.0.1"],
      policyYaml("port: 0\npath: healthz\nperiodSeconds: 5\ntimeoutSeconds: 10"),
    );
    expect(r.code).toBe(2);
    const lines = r.err.join("\n").split("\n");
    expect(lines.map((l) => l.split(":")[0]).sort()).toEqual([
      "spec.probe.path",
      "spec.probe.port",
      "spec.probe.timeoutSeconds",
    ]);
    expect(lines.find((l) => l.startsWith("spec.probe.timeoutSeconds"))).toContain(
      "timeoutSeconds 10 > periodSeconds 5",
    );
  });

  it("exits 1 when the probe fails", async () => {
    const r = await run(["--policy", "p.yaml", "--address", "127.0.0.1"], policyYaml(`port: ${port}\npath: /fail`));
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out[0]!)).toMatchObject({
      success: false,
      statusCode: 503,
      result: expect.stringMatching(/^HTTP 503 in/),
    });
  });

  it("needs --port for a named port, and uses it", async () => {
    const yaml = policyYaml("port: http\npath: /ok");
    const without = await run(["--policy", "p.yaml", "--address", "127.0.0.1"], yaml);
    expect(without.code).toBe(2);
    expect(without.err.join("\n")).toMatch(/^spec\.probe\.port: /);
    const withPort = await run(["--policy", "p.yaml", "--address", "127.0.0.1", "--port", String(port)], yaml);
    expect(withPort.code).toBe(0);
  });

  it("sends a header from --secret and names the field when it is missing", async () => {
    const yaml = policyYaml(
      `port: ${port}\npath: /ok\nheaders:\n  - name: Authorization\n    valueFrom: {secretKeyRef: {name: auth, key: token}}`,
    );
    const missing = await run(["--policy", "p.yaml", "--address", "127.0.0.1"], yaml);
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toMatch(/^spec\.probe\.headers\[0\]\.valueFrom\.secretKeyRef: .*--secret/);
    seenAuth.length = 0;
    const given = await run(
      ["--policy", "p.yaml", "--address", "127.0.0.1", "--secret", "auth/token=Bearer xyz"],
      yaml,
    );
    expect(given.code).toBe(0);
    expect(seenAuth).toEqual(["Bearer xyz"]);
  });

  const bad: Array<[string, string[], string, RegExp]> = [
    ["an invalid spec, naming the field", [], "port: 8080\npath: healthz", /^spec\.probe\.path: /],
    [
      "a timeout above the period",
      [],
      "port: 8080\npath: /\nperiodSeconds: 5\ntimeoutSeconds: 10",
      /^spec\.probe\.timeoutSeconds: /,
    ],
    ["a bad address", ["--address", "not-an-ip"], "port: 8080\npath: /", /^--address: /],
    ["a bad count", ["--count", "0"], "port: 8080\npath: /", /^--count: /],
    ["an unknown flag", ["--bogus"], "port: 8080\npath: /", /Unknown option/],
  ];
  it.each(bad)("exits 2 for %s", async (_n, extra, probe, message) => {
    const args = ["--policy", "p.yaml", "--address", "127.0.0.1", ...extra];
    const r = await run(args, policyYaml(probe));
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err.join("\n")).toMatch(message);
  });

  it("exits 2 when the file has no HealthProbePolicy", async () => {
    const r = await run(["--policy", "p.yaml", "--address", "127.0.0.1"], "apiVersion: v1\nkind: Service\n");
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/no HealthProbePolicy/);
  });
});
