import { describe, it, expect } from "@jest/globals";
import { parsePolicy, parsePolicySpec } from "./parse-policy.js";

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);

/** A minimal valid spec; probe, evaluation, drain and replacement in `over` are merged one level deep, other keys replaced, undefined removes. */
function aSpec(over: Raw = {}): Raw {
  const out: Raw = {
    serviceName: "web",
    selector: { matchLabels: { app: "web" } },
    probe: { port: 8080, path: "/healthz" },
  };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete out[k];
    else out[k] = k !== "selector" && isObject(v) && isObject(out[k]) ? { ...out[k], ...v } : v;
  }
  return out;
}

const aProbe = (over: Raw) => aSpec({ probe: over });

function aPolicy(over: Raw = {}): Raw {
  return {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "u-1",
      generation: 2,
      resourceVersion: "7",
      creationTimestamp: "2026-11-29T10:00:00Z",
    },
    spec: aSpec(),
    ...over,
  };
}

function errorsOf(raw: unknown) {
  const r = parsePolicySpec(raw);
  if (r.ok) throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
  return r;
}

describe("spec.drain.method", () => {
  it.each([
    ["defaults to EndpointSlice", aSpec(), "EndpointSlice", "web"],
    [
      "accepts ReadinessGate without a Service",
      aSpec({ serviceName: undefined, drain: { method: "ReadinessGate" } }),
      "ReadinessGate",
      undefined,
    ],
    [
      "accepts ReadinessGate with a Service to report on",
      aSpec({ drain: { method: "ReadinessGate" } }),
      "ReadinessGate",
      "web",
    ],
  ])("%s", (_name, raw, method, service) => {
    const r = parsePolicySpec(raw);
    expect(r.ok && [r.spec.drain.method, r.spec.serviceName]).toEqual([method, service]);
  });

  it("rejects an unknown method, naming the field", () => {
    expect(errorsOf(aSpec({ drain: { method: "Sidecar" } })).errors.map((e) => e.field)).toEqual(["spec.drain.method"]);
  });
});

describe("parsePolicySpec applies the contract's defaults", () => {
  const r = parsePolicySpec(aSpec());
  if (!r.ok) throw new Error(r.message);
  const spec = r.spec;

  it.each([
    ["dryRun", spec.dryRun, false],
    ["probe.scheme", spec.probe.scheme, "HTTP"],
    ["probe.method", spec.probe.method, "GET"],
    ["probe.periodSeconds", spec.probe.periodSeconds, 60],
    ["probe.timeoutSeconds", spec.probe.timeoutSeconds, 60],
    ["probe.match.statusCodes", spec.probe.match.statusCodes, ["200-299"]],
    ["evaluation.failureThreshold", spec.evaluation.failureThreshold, 10],
    ["evaluation.successThreshold", spec.evaluation.successThreshold, 1],
    ["evaluation.startupGraceSeconds", spec.evaluation.startupGraceSeconds, 0],
    ["drain.enabled", spec.drain.enabled, true],
    ["drain.maxUnhealthyPercent", spec.drain.maxUnhealthyPercent, 50],
    ["replacement.enabled", spec.replacement.enabled, true],
    ["replacement.after", spec.replacement.after, "1h"],
    ["replacement.maxPerHour", spec.replacement.maxPerHour, 1],
    ["replacement.maxPerDay", spec.replacement.maxPerDay, 3],
    ["replacement.method", spec.replacement.method, "Evict"],
    ["drain.whenAllUnhealthy", spec.drain.whenAllUnhealthy, "FailOpen"],
    ["evaluation.flapQuarantine (off)", spec.evaluation.flapQuarantine, undefined],
  ])("defaults spec.%s", (_field, actual, expected) => {
    expect(actual).toEqual(expected);
  });

  it("defaults the probe type to HTTP and a gRPC service to the server's overall health", () => {
    expect(spec.probe.type).toBe("HTTP");
    const g = parsePolicySpec(aProbe({ type: "GRPC", path: undefined, grpc: {} }));
    expect(g.ok && g.spec.probe.grpc).toEqual({ service: "" });
  });

  it("leaves optional features unset", () => {
    expect(spec.evaluation.window).toBeUndefined();
    expect(spec.probe.tls).toBeUndefined();
    expect(spec.probe.signature).toBeUndefined();
    expect(spec.probe.headers).toBeUndefined();
    expect(spec.probe.host).toBeUndefined();
    expect(spec.probe.match.bodyContains).toBeUndefined();
  });

  it("keeps the values a user sets", () => {
    const r2 = parsePolicySpec(
      aSpec({ probe: { port: "http", path: "/", periodSeconds: 30, timeoutSeconds: 5 }, drain: { enabled: false } }),
    );
    expect(
      r2.ok && [
        r2.spec.probe.port,
        r2.spec.probe.periodSeconds,
        r2.spec.probe.timeoutSeconds,
        r2.spec.drain.enabled,
        r2.spec.drain.maxUnhealthyPercent,
      ],
    ).toEqual(["http", 30, 5, false, 50]);
  });

  it("defaults flapQuarantine, once set, to 3 flaps in 10m with a back-off of up to 10m", () => {
    const r2 = parsePolicySpec(
      aSpec({ evaluation: { flapQuarantine: {} }, drain: { whenAllUnhealthy: "FailClosed" } }),
    );
    expect(r2.ok && r2.spec.evaluation.flapQuarantine).toEqual({ flaps: 3, window: "10m", maxBackoff: "10m" });
    expect(r2.ok && r2.spec.drain.whenAllUnhealthy).toBe("FailClosed");
  });

  it("defaults the sample window to Front Door's 4 samples, 2 required", () => {
    const r2 = parsePolicySpec(aSpec({ evaluation: { window: {} } }));
    expect(r2.ok && r2.spec.evaluation.window).toEqual({ sampleSize: 4, successfulSamplesRequired: 2 });
  });

  it("does not change its input", () => {
    const raw = aSpec();
    const copy = structuredClone(raw);
    parsePolicySpec(raw);
    expect(raw).toEqual(copy);
  });
});

describe("parsePolicySpec accepts every valid form", () => {
  it.each([
    ["a named container port", aProbe({ port: "http" })],
    ["port 1", aProbe({ port: 1 })],
    ["port 65535", aProbe({ port: 65535 })],
    ["a 15-character port name", aProbe({ port: "abcdefghijklmno" })],
    ["HTTPS with a CA bundle", aProbe({ scheme: "HTTPS", tls: { caBundle: "-----BEGIN CERTIFICATE-----" } })],
    ["HTTPS with tls left empty", aProbe({ scheme: "HTTPS", tls: {} })],
    ["HEAD without bodyContains", aProbe({ method: "HEAD" })],
    ["HEAD with an empty bodyContains", aProbe({ method: "HEAD", match: { bodyContains: "" } })],
    ["GET with bodyContains of 4090 characters", aProbe({ match: { bodyContains: "x".repeat(4090) } })],
    ["timeoutSeconds equal to periodSeconds", aProbe({ periodSeconds: 5, timeoutSeconds: 5 })],
    ["16 headers", aProbe({ headers: Array.from({ length: 16 }, (_, i) => ({ name: `X-H${i}`, value: "v" })) })],
    [
      "a header from a Secret",
      aProbe({
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
      }),
    ],
    ["a signature", aProbe({ signature: { secretRef: { name: "probe-key", key: "key" } } })],
    ["a host with a port", aProbe({ host: "shop.example.com:8443" })],
    ["status codes and ranges", aProbe({ match: { statusCodes: ["200", "300-399", "599"] } })],
    [
      "a matchExpressions-only selector",
      aSpec({ selector: { matchExpressions: [{ key: "app", operator: "Exists" }] } }),
    ],
    [
      "an In requirement",
      aSpec({ selector: { matchExpressions: [{ key: "tier", operator: "In", values: ["web", "api"] }] } }),
    ],
    ["a prefixed label key", aSpec({ selector: { matchLabels: { "app.kubernetes.io/name": "web" } } })],
    ["a window of 1 of 1", aSpec({ evaluation: { window: { sampleSize: 1, successfulSamplesRequired: 1 } } })],
    ["after 30s", aSpec({ replacement: { after: "30s" } })],
    ["after 168h", aSpec({ replacement: { after: "168h" } })],
    ["after 1h30m", aSpec({ replacement: { after: "1h30m" } })],
    ["no replacements at all", aSpec({ replacement: { maxPerHour: 0, maxPerDay: 0 } })],
    ["maxPerDay equal to maxPerHour", aSpec({ replacement: { maxPerHour: 5, maxPerDay: 5 } })],
    ["Delete as method", aSpec({ replacement: { method: "Delete" } })],
    ["dryRun", aSpec({ dryRun: true })],
  ])("accepts %s", (_name, raw) => {
    const r = parsePolicySpec(raw);
    expect(r.ok ? "valid" : r.message).toBe("valid");
  });
});

describe("parsePolicySpec rejects schema violations, naming the field", () => {
  it.each([
    ["a missing serviceName", aSpec({ serviceName: undefined }), "spec.serviceName", "Required value"],
    [
      "an invalid serviceName",
      aSpec({ serviceName: "Web_1" }),
      "spec.serviceName",
      'Invalid value: "Web_1": must be a Service name',
    ],
    ["a missing selector", aSpec({ selector: undefined }), "spec.selector", "Required value"],
    ["a missing probe", aSpec({ probe: undefined }), "spec.probe", "Required value"],
    ["a missing port", aProbe({ port: undefined }), "spec.probe.port", "Required value"],
    ["port 0", aProbe({ port: 0 }), "spec.probe.port", "Invalid value: 0: must be a port number 1-65535"],
    ["port 65536", aProbe({ port: 65536 }), "spec.probe.port", "Invalid value: 65536: must be a port number"],
    ["a fractional port", aProbe({ port: 80.5 }), "spec.probe.port", "Invalid value: 80.5: must be a port number"],
    ["a boolean port", aProbe({ port: true }), "spec.probe.port", "Invalid value: true: must be a port number"],
    ["a port name of 16 characters", aProbe({ port: "abcdefghijklmnop" }), "spec.probe.port", "container port name"],
    ["a port name without a letter", aProbe({ port: "8080" }), "spec.probe.port", 'Invalid value: "8080"'],
    ["a port name with --", aProbe({ port: "my--port" }), "spec.probe.port", 'Invalid value: "my--port"'],
    ["an upper-case port name", aProbe({ port: "HTTP" }), "spec.probe.port", 'Invalid value: "HTTP"'],
    ["a missing path", aProbe({ path: undefined }), "spec.probe.path", "Required value"],
    ["an empty path", aProbe({ path: "" }), "spec.probe.path", "Required value"],
    [
      "a path without a leading slash",
      aProbe({ path: "healthz" }),
      "spec.probe.path",
      'Invalid value: "healthz": must start with "/"',
    ],
    ["a path with a space", aProbe({ path: "/a b" }), "spec.probe.path", "no whitespace"],
    [
      "scheme FTP",
      aProbe({ scheme: "FTP" }),
      "spec.probe.scheme",
      'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"',
    ],
    [
      "method POST",
      aProbe({ method: "POST" }),
      "spec.probe.method",
      'Unsupported value: "POST": supported values: "GET", "HEAD"',
    ],
    ["a host with a path", aProbe({ host: "example.com/x" }), "spec.probe.host", "must be a host name"],
    [
      "periodSeconds 0",
      aProbe({ periodSeconds: 0 }),
      "spec.probe.periodSeconds",
      "Invalid value: 0: must be greater than or equal to 1",
    ],
    [
      "periodSeconds 3601",
      aProbe({ periodSeconds: 3601 }),
      "spec.probe.periodSeconds",
      "Invalid value: 3601: must be less than or equal to 3600",
    ],
    [
      "periodSeconds 1.5",
      aProbe({ periodSeconds: 1.5 }),
      "spec.probe.periodSeconds",
      "Invalid value: 1.5: must be an integer",
    ],
    [
      "periodSeconds as a string",
      aProbe({ periodSeconds: "60" }),
      "spec.probe.periodSeconds",
      'Invalid value: "60": must be of type number',
    ],
    [
      "timeoutSeconds 0",
      aProbe({ timeoutSeconds: 0 }),
      "spec.probe.timeoutSeconds",
      "must be greater than or equal to 1",
    ],
    [
      "17 headers",
      aProbe({ headers: Array.from({ length: 17 }, (_, i) => ({ name: `X-H${i}`, value: "v" })) }),
      "spec.probe.headers",
      "Too many: 17: must have at most 16 items",
    ],
    [
      "a header name with a space",
      aProbe({ headers: [{ name: "X Env", value: "v" }] }),
      "spec.probe.headers[0].name",
      "must be a valid HTTP header name",
    ],
    [
      "a header name with a colon",
      aProbe({ headers: [{ name: "X-Env:", value: "v" }] }),
      "spec.probe.headers[0].name",
      "must be a valid HTTP header name",
    ],
    [
      "a header value with a line break",
      aProbe({ headers: [{ name: "X-Env", value: "a\r\nInjected: 1" }] }),
      "spec.probe.headers[0].value",
      "must not contain line breaks",
    ],
    [
      "a repeated header",
      aProbe({
        headers: [
          { name: "X-Env", value: "a" },
          { name: "X-Env", value: "b" },
        ],
      }),
      "spec.probe.headers[1]",
      'Duplicate value: {"name":"X-Env"}',
    ],
    [
      "a secretKeyRef without key",
      aProbe({ headers: [{ name: "A", valueFrom: { secretKeyRef: { name: "s" } } }] }),
      "spec.probe.headers[0].valueFrom.secretKeyRef.key",
      "Required value",
    ],
    ["no status codes", aProbe({ match: { statusCodes: [] } }), "spec.probe.match.statusCodes", "Required value"],
    [
      "status code 99",
      aProbe({ match: { statusCodes: ["99"] } }),
      "spec.probe.match.statusCodes[0]",
      'Invalid value: "99": must be a status code',
    ],
    [
      "status code 600",
      aProbe({ match: { statusCodes: ["200", "600"] } }),
      "spec.probe.match.statusCodes[1]",
      "within 100-599",
    ],
    [
      "a status code range to 600",
      aProbe({ match: { statusCodes: ["500-600"] } }),
      "spec.probe.match.statusCodes[0]",
      "within 100-599",
    ],
    [
      "a status code as a number",
      aProbe({ match: { statusCodes: [200] } }),
      "spec.probe.match.statusCodes[0]",
      "Invalid value: 200: must be of type string",
    ],
    [
      "bodyContains of 4091 characters",
      aProbe({ match: { bodyContains: "x".repeat(4091) } }),
      "spec.probe.match.bodyContains",
      "Too long: may not be more than 4090 characters",
    ],
    ["a signature without secretRef", aProbe({ signature: {} }), "spec.probe.signature.secretRef", "Required value"],
    [
      "an unknown probe field",
      aProbe({ intervalSeconds: 5 }),
      "spec.probe.intervalSeconds",
      "Forbidden: field not declared in schema",
    ],
    ["an unknown top-level field", aSpec({ replicas: 3 }), "spec.replicas", "Forbidden: field not declared in schema"],
    [
      "failureThreshold 0",
      aSpec({ evaluation: { failureThreshold: 0 } }),
      "spec.evaluation.failureThreshold",
      "must be greater than or equal to 1",
    ],
    [
      "failureThreshold 101",
      aSpec({ evaluation: { failureThreshold: 101 } }),
      "spec.evaluation.failureThreshold",
      "must be less than or equal to 100",
    ],
    [
      "successThreshold 0",
      aSpec({ evaluation: { successThreshold: 0 } }),
      "spec.evaluation.successThreshold",
      "must be greater than or equal to 1",
    ],
    [
      "a negative startupGraceSeconds",
      aSpec({ evaluation: { startupGraceSeconds: -1 } }),
      "spec.evaluation.startupGraceSeconds",
      "must be greater than or equal to 0",
    ],
    [
      "sampleSize 0",
      aSpec({ evaluation: { window: { sampleSize: 0, successfulSamplesRequired: 0 } } }),
      "spec.evaluation.window.sampleSize",
      "must be greater than or equal to 1",
    ],
    [
      "maxUnhealthyPercent 0",
      aSpec({ drain: { maxUnhealthyPercent: 0 } }),
      "spec.drain.maxUnhealthyPercent",
      "Invalid value: 0: must be greater than or equal to 1",
    ],
    [
      "maxUnhealthyPercent 101",
      aSpec({ drain: { maxUnhealthyPercent: 101 } }),
      "spec.drain.maxUnhealthyPercent",
      "must be less than or equal to 100",
    ],
    [
      "drain.enabled as a string",
      aSpec({ drain: { enabled: "yes" } }),
      "spec.drain.enabled",
      'Invalid value: "yes": must be of type boolean',
    ],
    [
      "whenAllUnhealthy Drain",
      aSpec({ drain: { whenAllUnhealthy: "Drain" } }),
      "spec.drain.whenAllUnhealthy",
      'Unsupported value: "Drain": supported values: "FailOpen", "FailClosed"',
    ],
    [
      "flaps 1",
      aSpec({ evaluation: { flapQuarantine: { flaps: 1 } } }),
      "spec.evaluation.flapQuarantine.flaps",
      "must be greater than or equal to 2",
    ],
    [
      "flaps 101",
      aSpec({ evaluation: { flapQuarantine: { flaps: 101 } } }),
      "spec.evaluation.flapQuarantine.flaps",
      "must be less than or equal to 100",
    ],
    [
      "a flap window without a unit",
      aSpec({ evaluation: { flapQuarantine: { window: "600" } } }),
      "spec.evaluation.flapQuarantine.window",
      'Invalid value: "600": must be a duration',
    ],
    [
      "an unknown flapQuarantine field",
      aSpec({ evaluation: { flapQuarantine: { backoff: "1m" } } }),
      "spec.evaluation.flapQuarantine.backoff",
      "Forbidden: field not declared in schema",
    ],
    [
      "after without a unit",
      aSpec({ replacement: { after: "60" } }),
      "spec.replacement.after",
      'Invalid value: "60": must be a duration',
    ],
    ["after in days", aSpec({ replacement: { after: "1d" } }), "spec.replacement.after", "must be a duration"],
    [
      "maxPerHour 1001",
      aSpec({ replacement: { maxPerHour: 1001, maxPerDay: 2000 } }),
      "spec.replacement.maxPerHour",
      "must be less than or equal to 1000",
    ],
    [
      "maxPerDay 10001",
      aSpec({ replacement: { maxPerDay: 10001 } }),
      "spec.replacement.maxPerDay",
      "must be less than or equal to 10000",
    ],
    [
      "a negative maxPerHour",
      aSpec({ replacement: { maxPerHour: -1 } }),
      "spec.replacement.maxPerHour",
      "must be greater than or equal to 0",
    ],
    [
      "method Restart",
      aSpec({ replacement: { method: "Restart" } }),
      "spec.replacement.method",
      'Unsupported value: "Restart": supported values: "Evict", "Delete"',
    ],
    [
      "operator Equals",
      aSpec({ selector: { matchExpressions: [{ key: "app", operator: "Equals", values: ["x"] }] } }),
      "spec.selector.matchExpressions[0].operator",
      "Unsupported value",
    ],
    // Keys at the map, as the CRD's CEL rule reports them; values at the key, as the CRD's schema does.
    [
      "an invalid label key",
      aSpec({ selector: { matchLabels: { "-app": "web" } } }),
      "spec.selector.matchLabels",
      "keys must be label keys",
    ],
    [
      "a label value of 64 characters",
      aSpec({ selector: { matchLabels: { app: "x".repeat(64) } } }),
      "spec.selector.matchLabels.app",
      "Too long: may not be more than 63 characters",
    ],
    [
      "a label value with a space",
      aSpec({ selector: { matchLabels: { app: "bad value" } } }),
      "spec.selector.matchLabels.app",
      "must be a label value",
    ],
  ])("rejects %s", (_name, raw, field, message) => {
    const r = errorsOf(raw);
    const e = r.errors.find((x) => x.field === field);
    expect(e?.message ?? `no error for ${field} in: ${r.message}`).toContain(message);
    expect(r.message).toContain(`${field}: `);
  });

  it("reports every problem at once, aggregated the way the API server does", () => {
    const r = errorsOf(aSpec({ serviceName: undefined, probe: { port: 0, path: "x" } }));
    expect(r.errors.map((e) => e.field).sort()).toEqual(["spec.probe.path", "spec.probe.port", "spec.serviceName"]);
    expect(r.message).toMatch(/^\[spec\..*, spec\..*, spec\..*\]$/);
  });

  it.each([null, "spec", 42, []])("rejects a spec that is not an object: %j", (raw) => {
    const r = errorsOf(raw);
    expect(r.errors[0]?.field).toBe("spec");
  });
});

describe("parsePolicySpec enforces the cross-field rules", () => {
  it.each([
    [
      "no serviceName with the default method",
      aSpec({ serviceName: undefined }),
      "spec.serviceName: Required value: must be set when spec.drain.method is EndpointSlice (the default): the operator writes that Service's EndpointSlices",
    ],
    [
      "no serviceName with method EndpointSlice",
      aSpec({ serviceName: undefined, drain: { method: "EndpointSlice" } }),
      "spec.serviceName: Required value: must be set when spec.drain.method is EndpointSlice (the default): the operator writes that Service's EndpointSlices",
    ],
    [
      "timeoutSeconds above periodSeconds",
      aProbe({ periodSeconds: 60, timeoutSeconds: 61 }),
      "spec.probe.timeoutSeconds: Invalid value: 61: timeoutSeconds 61 > periodSeconds 60: must be less than or equal to spec.probe.periodSeconds",
    ],
    [
      "timeoutSeconds above the default periodSeconds",
      aProbe({ timeoutSeconds: 61 }),
      "spec.probe.timeoutSeconds: Invalid value: 61: timeoutSeconds 61 > periodSeconds 60: must be less than or equal to spec.probe.periodSeconds",
    ],
    [
      "the default timeoutSeconds above a shorter periodSeconds",
      aProbe({ periodSeconds: 10 }),
      "spec.probe.timeoutSeconds: Invalid value: 60: timeoutSeconds 60 > periodSeconds 10: must be less than or equal to spec.probe.periodSeconds",
    ],
    [
      "bodyContains with HEAD",
      aProbe({ method: "HEAD", match: { bodyContains: "ok" } }),
      'spec.probe.match.bodyContains: Invalid value: "ok": must be empty when spec.probe.method is HEAD: a HEAD response has no body',
    ],
    [
      "tls with HTTP",
      aProbe({ tls: { caBundle: "pem" } }),
      'spec.probe.tls: Invalid value: {"caBundle":"pem"}: may only be set when spec.probe.scheme is HTTPS',
    ],
    [
      "a header with neither value nor valueFrom",
      aProbe({ headers: [{ name: "X-Env" }] }),
      'spec.probe.headers[0]: Invalid value: {"name":"X-Env"}: exactly one of value or valueFrom must be set',
    ],
    [
      "a header with both value and valueFrom",
      aProbe({
        headers: [
          { name: "X-A", value: "v" },
          { name: "X-Env", value: "v", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
        ],
      }),
      'spec.probe.headers[1]: Invalid value: {"name":"X-Env"}: exactly one of value or valueFrom must be set',
    ],
    [
      "a Host header",
      aProbe({
        headers: [
          { name: "X-Env", value: "a" },
          { name: "host", value: "b" },
        ],
      }),
      'spec.probe.headers[1].name: Invalid value: "host": must not be Host (use spec.probe.host), Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer or Expect: the prober owns the request framing',
    ],
    [
      "a Content-Length header",
      aProbe({ headers: [{ name: "Content-Length", value: "5" }] }),
      'spec.probe.headers[0].name: Invalid value: "Content-Length": must not be Host (use spec.probe.host), Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer or Expect: the prober owns the request framing',
    ],
    [
      "a TRANSFER-ENCODING header, in any case",
      aProbe({ headers: [{ name: "TRANSFER-ENCODING", value: "chunked" }] }),
      'spec.probe.headers[0].name: Invalid value: "TRANSFER-ENCODING": must not be Host (use spec.probe.host), Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer or Expect: the prober owns the request framing',
    ],
    [
      "header names that differ only in case",
      aProbe({
        headers: [
          { name: "X-Env", value: "a" },
          { name: "x-env", value: "b" },
        ],
      }),
      'spec.probe.headers: Invalid value: ["X-Env","x-env"]: header names must be unique, ignoring case',
    ],
    [
      "a reversed status code range",
      aProbe({ match: { statusCodes: ["200", "399-200"] } }),
      'spec.probe.match.statusCodes[1]: Invalid value: "399-200": range 399-200 must be ordered low-high',
    ],
    [
      "more required successes than samples",
      aSpec({ evaluation: { window: { sampleSize: 3, successfulSamplesRequired: 4 } } }),
      "spec.evaluation.window.successfulSamplesRequired: Invalid value: 4: successfulSamplesRequired 4 > sampleSize 3: must be less than or equal to spec.evaluation.window.sampleSize",
    ],
    [
      "the default required successes above a window of 1",
      aSpec({ evaluation: { window: { sampleSize: 1 } } }),
      "spec.evaluation.window.successfulSamplesRequired: Invalid value: 2: successfulSamplesRequired 2 > sampleSize 1: must be less than or equal to spec.evaluation.window.sampleSize",
    ],
    [
      "maxPerDay below maxPerHour",
      aSpec({ replacement: { maxPerHour: 5, maxPerDay: 4 } }),
      "spec.replacement.maxPerDay: Invalid value: 4: maxPerDay 4 < maxPerHour 5: must be greater than or equal to spec.replacement.maxPerHour",
    ],
    [
      "maxPerDay 0 with the default maxPerHour",
      aSpec({ replacement: { maxPerDay: 0 } }),
      "spec.replacement.maxPerDay: Invalid value: 0: maxPerDay 0 < maxPerHour 1: must be greater than or equal to spec.replacement.maxPerHour",
    ],
    [
      "after below 30s",
      aSpec({ replacement: { after: "29s" } }),
      'spec.replacement.after: Invalid value: "29s": after 29s: must be between 30s and 168h',
    ],
    [
      "after above 168h",
      aSpec({ replacement: { after: "168h1s" } }),
      'spec.replacement.after: Invalid value: "168h1s": after 168h1s: must be between 30s and 168h',
    ],
    [
      "a flap window below 10s",
      aSpec({ evaluation: { flapQuarantine: { window: "9s" } } }),
      'spec.evaluation.flapQuarantine.window: Invalid value: "9s": window 9s: must be between 10s and 24h',
    ],
    [
      "a flap window above 24h",
      aSpec({ evaluation: { flapQuarantine: { window: "25h" } } }),
      'spec.evaluation.flapQuarantine.window: Invalid value: "25h": window 25h: must be between 10s and 24h',
    ],
    [
      "a flap back-off below 1s",
      aSpec({ evaluation: { flapQuarantine: { maxBackoff: "500ms" } } }),
      'spec.evaluation.flapQuarantine.maxBackoff: Invalid value: "500ms": maxBackoff 500ms: must be between 1s and 24h',
    ],
    [
      "an empty selector",
      aSpec({ selector: {} }),
      "spec.selector: Invalid value: {}: must not be empty: set matchLabels or matchExpressions",
    ],
    [
      "a selector with empty lists",
      aSpec({ selector: { matchLabels: {}, matchExpressions: [] } }),
      'spec.selector: Invalid value: {"matchLabels":{},"matchExpressions":[]}: must not be empty: set matchLabels or matchExpressions',
    ],
    [
      "In without values",
      aSpec({ selector: { matchExpressions: [{ key: "app", operator: "In" }] } }),
      "spec.selector.matchExpressions[0].values: Invalid value: []: must be non-empty for operators In and NotIn, and empty for Exists and DoesNotExist",
    ],
    [
      "NotIn with no values",
      aSpec({ selector: { matchExpressions: [{ key: "app", operator: "NotIn", values: [] }] } }),
      "spec.selector.matchExpressions[0].values: Invalid value: []: must be non-empty for operators In and NotIn, and empty for Exists and DoesNotExist",
    ],
    [
      "Exists with values",
      aSpec({ selector: { matchExpressions: [{ key: "app", operator: "Exists", values: ["x"] }] } }),
      'spec.selector.matchExpressions[0].values: Invalid value: ["x"]: must be non-empty for operators In and NotIn, and empty for Exists and DoesNotExist',
    ],
    [
      "a path on a TCP probe",
      aProbe({ type: "TCP" }),
      'spec.probe.path: Invalid value: "/healthz": may only be set when spec.probe.type is HTTP',
    ],
    [
      "a method on a gRPC probe",
      aProbe({ type: "GRPC", path: undefined, method: "GET" }),
      'spec.probe.method: Invalid value: "GET": may only be set when spec.probe.type is HTTP',
    ],
    [
      "headers on a TCP probe",
      aProbe({ type: "TCP", path: undefined, headers: [{ name: "X", value: "v" }] }),
      'spec.probe.headers: Invalid value: [{"name":"X","value":"v"}]: may not be set when spec.probe.type is TCP: a TCP probe only opens a connection and sends nothing',
    ],
    [
      "HTTPS on a TCP probe",
      aProbe({ type: "TCP", path: undefined, scheme: "HTTPS" }),
      'spec.probe.scheme: Invalid value: "HTTPS": must be HTTP (the default) when spec.probe.type is TCP: a TCP probe only opens a connection',
    ],
    [
      "grpc settings on an HTTP probe",
      aProbe({ grpc: { service: "x" } }),
      'spec.probe.grpc: Invalid value: {"service":"x"}: may only be set when spec.probe.type is GRPC',
    ],
    [
      "grpc-* metadata on a gRPC probe",
      aProbe({ type: "GRPC", path: undefined, headers: [{ name: "Grpc-Timeout", value: "1S" }] }),
      'spec.probe.headers: Invalid value: ["Grpc-Timeout"]: must not name Content-Type or grpc-* when spec.probe.type is GRPC: the prober owns the gRPC framing',
    ],
    [
      "no path on an HTTP probe",
      aProbe({ path: undefined }),
      "spec.probe.path: Required value: is required when spec.probe.type is HTTP",
    ],
    [
      "a latency threshold not below the timeout",
      aProbe({ periodSeconds: 5, timeoutSeconds: 5, match: { maxLatencyMilliseconds: 5000 } }),
      "spec.probe.match.maxLatencyMilliseconds: Invalid value: 5000: maxLatencyMilliseconds 5000 >= timeoutSeconds 5 × 1000: must be less than spec.probe.timeoutSeconds × 1000",
    ],
  ])("rejects %s", (_name, raw, line) => {
    const r = errorsOf(raw);
    expect(r.errors.map((e) => `${e.field}: ${e.message}`)).toContain(line);
    expect(r.message).toContain(line);
  });
});

describe("parsePolicy checks a whole object", () => {
  it("accepts a policy and returns it with defaults and metadata", () => {
    const r = parsePolicy(
      aPolicy({
        status: {
          observedGeneration: 1,
          targets: 2,
          pods: [{ name: "p", uid: "u", state: "Healthy", since: "2026-11-29T10:00:00Z", drained: false }],
        },
      }),
    );
    if (!r.ok) throw new Error(r.message);
    expect(r.policy.metadata).toMatchObject({
      name: "web",
      namespace: "shop",
      uid: "u-1",
      generation: 2,
      resourceVersion: "7",
    });
    expect(r.policy.spec.replacement.after).toBe("1h");
    expect(r.policy.status?.pods?.[0]?.state).toBe("Healthy");
  });

  it.each([
    ["a missing name", aPolicy({ metadata: { namespace: "shop" } }), "metadata.name: Required value"],
    ["a missing namespace", aPolicy({ metadata: { name: "web" } }), "metadata.namespace: Required value"],
    ["no metadata", aPolicy({ metadata: undefined }), "metadata.name: Required value"],
    ["another kind", aPolicy({ kind: "Pod" }), 'kind: Unsupported value: "Pod": supported values: "HealthProbePolicy"'],
    [
      "another version",
      aPolicy({ apiVersion: "healthprobe.io/v1" }),
      'apiVersion: Unsupported value: "healthprobe.io/v1": supported values: "healthprobe.io/v1alpha1"',
    ],
    ["no spec", aPolicy({ spec: undefined }), "spec: Required value"],
    [
      "an invalid spec",
      aPolicy({ spec: aProbe({ timeoutSeconds: 61 }) }),
      "spec.probe.timeoutSeconds: Invalid value: 61",
    ],
    [
      "an invalid status",
      aPolicy({
        status: { pods: [{ name: "p", uid: "u", state: "Sick", since: "2026-11-29T10:00:00Z", drained: false }] },
      }),
      'status.pods[0].state: Unsupported value: "Sick"',
    ],
  ])("rejects %s", (_name, raw, expected) => {
    const r = parsePolicy(raw);
    expect(r.ok ? "valid" : r.message).toContain(expected);
  });

  it("rejects something that is not an object", () => {
    const r = parsePolicy("hpp");
    expect(r.ok).toBe(false);
  });
});
