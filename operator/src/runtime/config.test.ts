import { describe, it, expect } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { parseConfig, parseBindAddress, usage, type OperatorConfig } from "./config.js";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "..", "..", "..");

/** Runs loadConfigOrExit in a fresh process, as the entry point does. */
function runEntry(argv: string[]) {
  const code = `import { loadConfigOrExit } from ${JSON.stringify(join(here, "config.ts"))}; const c = loadConfigOrExit(${JSON.stringify(argv)}, {}); console.log(JSON.stringify(c));`;
  return spawnSync(join(repoRoot, "node_modules", ".bin", "tsx"), ["-e", code], { encoding: "utf8", cwd: repoRoot });
}

function configOf(argv: string[], env: Record<string, string> = {}, deps = {}): OperatorConfig {
  const r = parseConfig(argv, env, deps);
  if (!r.ok) throw new Error(`expected a valid config, got: ${r.message}`);
  return r.config;
}

function errorOf(argv: string[], env: Record<string, string> = {}): string {
  const r = parseConfig(argv, env);
  if (r.ok) throw new Error(`expected an error for ${JSON.stringify(argv)}`);
  return r.message;
}

describe("parseConfig", () => {
  it("uses the documented defaults when nothing is given", () => {
    expect(configOf([])).toEqual({
      kubeconfig: undefined,
      namespaces: [],
      metricsBindAddress: { disabled: false, host: "", port: 8080 },
      healthProbeBindAddress: { disabled: false, host: "", port: 8081 },
      leaderElect: false,
      leaderElectionId: "healthprobe-operator",
      shards: {
        enabled: false,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        skewMarginMs: 2_000,
      },
      ledgerConfigMapName: "healthprobe-operator-ledger",
      operatorNamespace: "healthprobe-system",
      maxReplacementsPer12h: 10,
      maxReplacementsPer12hPerNamespace: 5,
      insecureDiagnostics: false,
      maxEndpointsPerSlice: 100,
      maxConcurrentProbes: 2048,
      maxProbesInFlightPerNamespace: 512,
      maxProbeTimeoutMs: 60_000,
      heapGrowthPercent: 50,
      webhook: {
        bindAddress: { disabled: true },
        serviceName: "healthprobe-operator-webhook",
        secretName: "healthprobe-operator-webhook-cert",
        configurationName: "healthprobe-operator",
        manageCertificate: true,
        extraSans: [],
      },
      logLevel: "info",
      help: false,
    });
  });

  it.each<[string, string[], Partial<OperatorConfig>]>([
    ["reads a kubeconfig path", ["--kubeconfig", "kc.yaml"], { kubeconfig: "kc.yaml" }],
    ["restricts to one namespace", ["--namespace=shop"], { namespaces: ["shop"] }],
    [
      "restricts to a comma-separated list of namespaces, in its order",
      ["--namespace=shop,payments"],
      { namespaces: ["shop", "payments"] },
    ],
    [
      "ignores spaces around the namespaces of a list",
      ["--namespace", " shop , payments "],
      { namespaces: ["shop", "payments"] },
    ],
    ["disables metrics with 0", ["--metrics-bind-address", "0"], { metricsBindAddress: { disabled: true } }],
    [
      "binds health to an explicit host and ephemeral port",
      ["--health-probe-bind-address", "127.0.0.1:0"],
      { healthProbeBindAddress: { disabled: false, host: "127.0.0.1", port: 0 } },
    ],
    ["turns leader election on with a bare flag", ["--leader-elect"], { leaderElect: true }],
    ["turns leader election off with =false", ["--leader-elect=false"], { leaderElect: false }],
    ["names the lease", ["--leader-election-id", "hp.example.com"], { leaderElectionId: "hp.example.com" }],
    [
      "turns shards on",
      ["--shards=on"],
      {
        shards: {
          enabled: true,
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 2_000,
          skewMarginMs: 2_000,
        },
      },
    ],
    [
      "reads shard timings in ms, s and bare seconds",
      [
        "--shards",
        "on",
        "--shard-lease-duration=3s",
        "--shard-renew-deadline=2000ms",
        "--shard-retry-period=500ms",
        "--shard-skew-margin=1",
      ],
      {
        shards: {
          enabled: true,
          leaseDurationMs: 3_000,
          renewDeadlineMs: 2_000,
          retryPeriodMs: 500,
          skewMarginMs: 1_000,
        },
      },
    ],
    ["names the ledger ConfigMap", ["--ledger-configmap-name", "hp-ledger"], { ledgerConfigMapName: "hp-ledger" }],
    ["accepts a replacement cap of zero", ["--max-replacements-per-12h", "0"], { maxReplacementsPer12h: 0 }],
    [
      "gives a cap of zero a share of zero",
      ["--max-replacements-per-12h", "0"],
      { maxReplacementsPer12hPerNamespace: 0 },
    ],
    [
      "gives each namespace half the cap by default, rounded down",
      ["--max-replacements-per-12h", "7"],
      { maxReplacementsPer12hPerNamespace: 3 },
    ],
    [
      "gives each namespace at least 1 by default",
      ["--max-replacements-per-12h", "1"],
      { maxReplacementsPer12hPerNamespace: 1 },
    ],
    [
      "accepts a share equal to the cap (no share)",
      ["--max-replacements-per-12h", "10", "--max-replacements-per-12h-per-namespace", "10"],
      { maxReplacementsPer12hPerNamespace: 10 },
    ],
    [
      "serves diagnostics to anyone with --insecure-diagnostics",
      ["--insecure-diagnostics"],
      { insecureDiagnostics: true },
    ],
    ["accepts 1000 endpoints per slice", ["--max-endpoints-per-slice", "1000"], { maxEndpointsPerSlice: 1000 }],
    ["sets probe concurrency", ["--max-concurrent-probes", "8"], { maxConcurrentProbes: 8 }],
    ["caps probe timeouts at two minutes", ["--max-probe-timeout", "2m"], { maxProbeTimeoutMs: 120_000 }],
    [
      "caps probe timeouts at 90 seconds given plain seconds",
      ["--max-probe-timeout", "90"],
      { maxProbeTimeoutMs: 90_000 },
    ],
    [
      "sets one namespace's share of the probe slots",
      ["--max-probes-in-flight-per-namespace", "64"],
      { maxProbesInFlightPerNamespace: 64 },
    ],
    ["leaves heap growth to V8 with zero", ["--heap-growth-percent", "0"], { heapGrowthPercent: 0 }],
    ["sets the log level", ["--log-level", "debug"], { logLevel: "debug" }],
    [
      "turns the webhook on with a bind address",
      ["--webhook-bind-address", ":9443"],
      { webhook: { bindAddress: { disabled: false, host: "", port: 9443 } } as OperatorConfig["webhook"] },
    ],
    [
      "leaves the certificate to cert-manager",
      ["--webhook-manage-certificate=false"],
      { webhook: { manageCertificate: false } as OperatorConfig["webhook"] },
    ],
    [
      "keeps no caBundle with an empty configuration name",
      ["--webhook-configuration-name="],
      { webhook: { configurationName: "" } as OperatorConfig["webhook"] },
    ],
    [
      "adds names and addresses to the certificate",
      ["--webhook-extra-sans", "10.244.3.1, hp.example.com"],
      { webhook: { extraSans: ["10.244.3.1", "hp.example.com"] } as OperatorConfig["webhook"] },
    ],
    ["recognises --help", ["--help"], { help: true }],
  ])("%s", (_name, argv, expected) => {
    expect(configOf(argv)).toMatchObject(expected);
  });

  it.each<[string, string[], string]>([
    ["an unknown flag", ["--foo"], "unknown flag --foo"],
    [
      "a slice size of zero",
      ["--max-endpoints-per-slice", "0"],
      "--max-endpoints-per-slice: must be between 1 and 1000, got 0",
    ],
    [
      "a slice size above 1000",
      ["--max-endpoints-per-slice", "1001"],
      "--max-endpoints-per-slice: must be between 1 and 1000, got 1001",
    ],
    [
      "a non-numeric slice size",
      ["--max-endpoints-per-slice", "ten"],
      '--max-endpoints-per-slice: must be an integer, got "ten"',
    ],
    [
      "a negative replacement cap",
      ["--max-replacements-per-12h", "-1"],
      "--max-replacements-per-12h: must be at least 0, got -1",
    ],
    [
      "a share above the cap",
      ["--max-replacements-per-12h-per-namespace", "11"],
      "--max-replacements-per-12h-per-namespace: must be at most --max-replacements-per-12h (10), got 11",
    ],
    [
      "a share of zero with a cap",
      ["--max-replacements-per-12h-per-namespace", "0"],
      "--max-replacements-per-12h-per-namespace: must be at least 1 while --max-replacements-per-12h is 10 (0 would block every namespace), got 0",
    ],
    ["zero probe concurrency", ["--max-concurrent-probes", "0"], "--max-concurrent-probes: must be at least 1, got 0"],
    [
      "a probe timeout cap of zero",
      ["--max-probe-timeout", "0s"],
      '--max-probe-timeout: must be a duration between 1s and 1h, e.g. "60s" or "2m", got "0s"',
    ],
    [
      "a probe timeout cap above an hour",
      ["--max-probe-timeout", "2h"],
      '--max-probe-timeout: must be a duration between 1s and 1h, e.g. "60s" or "2m", got "2h"',
    ],
    [
      "a per-namespace probe share of zero",
      ["--max-probes-in-flight-per-namespace", "0"],
      "--max-probes-in-flight-per-namespace: must be at least 1, got 0",
    ],
    [
      "a non-numeric per-namespace probe share",
      ["--max-probes-in-flight-per-namespace", "many"],
      '--max-probes-in-flight-per-namespace: must be an integer, got "many"',
    ],
    [
      "a heap growth above 400",
      ["--heap-growth-percent", "401"],
      "--heap-growth-percent: must be between 0 and 400, got 401",
    ],
    [
      "an unknown log level",
      ["--log-level", "loud"],
      '--log-level: must be one of trace|debug|info|warn|error, got "loud"',
    ],
    [
      "a malformed metrics address",
      ["--metrics-bind-address", "8080"],
      '--metrics-bind-address: must be "host:port", ":port" or "0", got "8080"',
    ],
    [
      "a health port out of range",
      ["--health-probe-bind-address", ":70000"],
      "--health-probe-bind-address: port must be between 0 and 65535, got 70000",
    ],
    ["a non-boolean leader-elect", ["--leader-elect=maybe"], '--leader-elect: must be true or false, got "maybe"'],
    [
      "an invalid lease name",
      ["--leader-election-id", "Not_Valid"],
      '--leader-election-id: must be a lowercase RFC 1123 subdomain, got "Not_Valid"',
    ],
    [
      "an invalid ledger ConfigMap name",
      ["--ledger-configmap-name", "Bad Name"],
      '--ledger-configmap-name: must be a lowercase RFC 1123 subdomain, got "Bad Name"',
    ],
    ["an invalid namespace", ["--namespace", "Shop"], '--namespace: must be a lowercase RFC 1123 label, got "Shop"'],
    [
      "an invalid namespace in a list",
      ["--namespace", "shop,pay_ments"],
      '--namespace: must be a lowercase RFC 1123 label, got "pay_ments"',
    ],
    [
      "a namespace longer than a label",
      ["--namespace", `shop,${"a".repeat(64)}`],
      `--namespace: must be at most 63 characters, got "${"a".repeat(64)}"`,
    ],
    [
      "a namespace listed twice",
      ["--namespace", "shop,payments,shop"],
      '--namespace: lists "shop" twice, got "shop,payments,shop"',
    ],
    [
      "an empty entry in the namespace list",
      ["--namespace", "shop,,payments"],
      '--namespace: must be namespace names separated by commas, with none empty, got "shop,,payments"',
    ],
    [
      "a trailing comma in the namespace list",
      ["--namespace", "shop,"],
      '--namespace: must be namespace names separated by commas, with none empty, got "shop,"',
    ],
    [
      "an empty namespace list",
      ["--namespace="],
      '--namespace: must be namespace names separated by commas, with none empty, got ""',
    ],
    [
      "an invalid operator namespace",
      ["--operator-namespace", "a_b"],
      '--operator-namespace: must be a lowercase RFC 1123 label, got "a_b"',
    ],
    ["an empty kubeconfig", ["--kubeconfig="], '--kubeconfig: must not be empty, got ""'],
    ["a flag without its value", ["--namespace"], "--namespace: needs a value"],
    [
      "a malformed webhook address",
      ["--webhook-bind-address", "9443"],
      '--webhook-bind-address: must be "host:port", ":port" or "0", got "9443"',
    ],
    [
      "an invalid webhook Secret name",
      ["--webhook-secret-name", "Cert"],
      '--webhook-secret-name: must be a lowercase RFC 1123 subdomain, got "Cert"',
    ],
    [
      "a certificate name that is neither DNS nor IP",
      ["--webhook-extra-sans", "a_b"],
      '--webhook-extra-sans: must be DNS names or IP addresses, got "a_b"',
    ],
    ["a stray positional argument", ["run"], "unexpected argument run"],
    ["shards neither on nor off", ["--shards=yes"], '--shards: must be on or off, got "yes"'],
    [
      "shards with leader election",
      ["--shards=on", "--leader-elect"],
      "--shards: on replaces --leader-elect (every replica works, each on its own namespaces); give one of them",
    ],
    [
      "a shard renew deadline not below the lease duration",
      ["--shard-renew-deadline=15s"],
      "--shard-renew-deadline: must be below --shard-lease-duration (15000ms), got 15000ms",
    ],
    [
      "a shard retry period not below the renew deadline",
      ["--shard-retry-period=10s"],
      "--shard-retry-period: must be below --shard-renew-deadline (10000ms), got 10000ms",
    ],
    [
      "a malformed shard duration",
      ["--shard-skew-margin=2 s"],
      '--shard-skew-margin: must be a duration between 0ms and 600s, e.g. "15s" or "1500ms", got "2 s"',
    ],
  ])("rejects %s with a message naming the flag", (_name, argv, message) => {
    expect(errorOf(argv)).toBe(message);
  });

  it("reads HEALTHPROBE_<FLAG> from the environment", () => {
    const c = configOf([], {
      HEALTHPROBE_LOG_LEVEL: "warn",
      HEALTHPROBE_LEADER_ELECT: "true",
      HEALTHPROBE_MAX_ENDPOINTS_PER_SLICE: "50",
      HEALTHPROBE_NAMESPACE: "shop,payments",
    });
    expect(c).toMatchObject({
      logLevel: "warn",
      leaderElect: true,
      maxEndpointsPerSlice: 50,
      namespaces: ["shop", "payments"],
    });
  });

  it("lets a flag win over the environment", () => {
    expect(configOf(["--log-level", "error"], { HEALTHPROBE_LOG_LEVEL: "trace" }).logLevel).toBe("error");
    expect(configOf(["--leader-elect=false"], { HEALTHPROBE_LEADER_ELECT: "true" }).leaderElect).toBe(false);
  });

  it("names the flag when an environment value is invalid", () => {
    expect(errorOf([], { HEALTHPROBE_MAX_ENDPOINTS_PER_SLICE: "0" })).toBe(
      "--max-endpoints-per-slice: must be between 1 and 1000, got 0",
    );
  });

  it.each<[string, Record<string, string>, (() => string | undefined) | undefined, string]>([
    ["the flag first", { POD_NAMESPACE: "from-pod" }, () => "from-sa", "from-pod"],
    [
      "POD_NAMESPACE when set",
      { POD_NAMESPACE: "from-pod", KUBERNETES_SERVICE_HOST: "10.0.0.1" },
      () => "from-sa",
      "from-pod",
    ],
    ["the service account namespace in a cluster", { KUBERNETES_SERVICE_HOST: "10.0.0.1" }, () => "from-sa", "from-sa"],
    ["healthprobe-system outside a cluster", {}, () => "from-sa", "healthprobe-system"],
    [
      "healthprobe-system when the service account file is missing",
      { KUBERNETES_SERVICE_HOST: "10.0.0.1" },
      () => undefined,
      "healthprobe-system",
    ],
  ])("chooses the operator namespace from %s", (name, env, readSa, expected) => {
    const argv = name === "the flag first" ? ["--operator-namespace", "from-flag"] : [];
    const want = name === "the flag first" ? "from-flag" : expected;
    expect(configOf(argv, env, { readServiceAccountNamespace: readSa }).operatorNamespace).toBe(want);
  });

  it("documents every flag in the usage text", () => {
    for (const flag of [
      "kubeconfig",
      "namespace",
      "metrics-bind-address",
      "health-probe-bind-address",
      "leader-elect",
      "leader-election-id",
      "ledger-configmap-name",
      "operator-namespace",
      "max-replacements-per-12h",
      "max-replacements-per-12h-per-namespace",
      "insecure-diagnostics",
      "max-endpoints-per-slice",
      "max-concurrent-probes",
      "max-probes-in-flight-per-namespace",
      "max-probe-timeout",
      "heap-growth-percent",
      "webhook-bind-address",
      "webhook-service-name",
      "webhook-secret-name",
      "webhook-configuration-name",
      "webhook-manage-certificate",
      "webhook-extra-sans",
      "log-level",
      "help",
    ]) {
      expect(usage()).toContain(`--${flag}`);
    }
  });
});

describe("loadConfigOrExit", () => {
  it("exits 2 with the message for a bad flag", () => {
    const r = runEntry(["--max-endpoints-per-slice", "0"]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe("--max-endpoints-per-slice: must be between 1 and 1000, got 0");
  });

  it("prints usage and exits 0 for --help", () => {
    const r = runEntry(["--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("--max-replacements-per-12h");
  });

  it("returns the config when the flags are valid", () => {
    const r = runEntry(["--namespace", "shop"]);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ namespaces: ["shop"], maxEndpointsPerSlice: 100 });
  });
});

describe("parseBindAddress", () => {
  it.each<[string, ReturnType<typeof parseBindAddress>]>([
    [":8080", { disabled: false, host: "", port: 8080 }],
    ["0.0.0.0:9090", { disabled: false, host: "0.0.0.0", port: 9090 }],
    ["[::1]:0", { disabled: false, host: "::1", port: 0 }],
    ["0", { disabled: true }],
  ])("parses %s", (input, expected) => {
    expect(parseBindAddress(input)).toEqual(expected);
  });
});
