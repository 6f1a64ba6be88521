// Operator configuration from flags and HEALTHPROBE_<FLAG> environment variables (flags win),
// validated so that every error names the flag it is about.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { z } from "zod";
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from "../api/dns-names.js";
import { rawFlagValues, usage } from "./config-flags.js";

export { usage };

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type BindAddress = { disabled: true } | { disabled: false; host: string; port: number };

export interface OperatorConfig {
  kubeconfig?: string;
  /** Namespaces to watch, in the order given; empty means all namespaces. */
  namespaces: string[];
  metricsBindAddress: BindAddress;
  healthProbeBindAddress: BindAddress;
  leaderElect: boolean;
  /** Also the shard ring's name when shards are on. */
  leaderElectionId: string;
  shards: ShardsConfig;
  /** ConfigMap in operatorNamespace holding the operator-wide replacement ledger. */
  ledgerConfigMapName: string;
  operatorNamespace: string;
  maxReplacementsPer12h: number;
  /** One namespace's share of maxReplacementsPer12h: what one tenant may spend of the operator-wide cap. */
  maxReplacementsPer12hPerNamespace: number;
  /** True: /metrics and /debug/targets answer anyone (local runs); false: TokenReview + SubjectAccessReview. */
  insecureDiagnostics: boolean;
  maxEndpointsPerSlice: number;
  maxConcurrentProbes: number;
  /** One namespace's share of maxConcurrentProbes: pods of one tenant that never answer cannot hold every slot. */
  maxProbesInFlightPerNamespace: number;
  /** --max-probe-timeout in ms: no probe of any type holds its slot longer, whatever timeoutSeconds asks. */
  maxProbeTimeoutMs: number;
  /** How far V8 lets the heap grow past the live heap before a full GC, in percent; 0 leaves it to V8. */
  heapGrowthPercent: number;
  webhook: WebhookConfig;
  logLevel: LogLevel;
  help: boolean;
}

/** Namespaces shared across replicas; off: leader election (or a single replica) as before. */
export interface ShardsConfig {
  enabled: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  skewMarginMs: number;
}

/** The readiness-gate admission webhook; off unless webhookBindAddress is set. */
export interface WebhookConfig {
  bindAddress: BindAddress;
  /** The Service kube-apiserver calls it through, in operatorNamespace: the certificate names it. */
  serviceName: string;
  /** Secret in operatorNamespace holding the serving certificate (tls.crt, tls.key, ca.crt). */
  secretName: string;
  /** The MutatingWebhookConfiguration whose caBundle the operator keeps; "" for none. */
  configurationName: string;
  /** True: the operator makes and rotates the certificate; false: it only reads the Secret (cert-manager). */
  manageCertificate: boolean;
  /** More DNS names or IP addresses for the certificate (a webhook reached by URL). */
  extraSans: string[];
}

export type ParseConfigResult = { ok: true; config: OperatorConfig } | { ok: false; message: string };

export interface ConfigDeps {
  /** Namespace of the pod's service account when running in a cluster. */
  readServiceAccountNamespace?: () => string | undefined;
}

const SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

export function parseBindAddress(value: string): BindAddress | string {
  if (value === "0") return { disabled: true };
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  if (!m) return `must be "host:port", ":port" or "0", got ${JSON.stringify(value)}`;
  const port = Number(m[3]);
  if (port > 65535) return `port must be between 0 and 65535, got ${port}`;
  const host = m[1] ?? m[2] ?? "";
  return { disabled: false, host, port };
}

function intFlag(min: number, max?: number) {
  return z.string().transform((raw, ctx) => {
    const text = raw.trim();
    if (!/^-?\d+$/.test(text)) {
      ctx.addIssue({ code: "custom", message: `must be an integer, got ${JSON.stringify(raw)}` });
      return z.NEVER;
    }
    const n = Number(text);
    if (n < min || (max !== undefined && n > max)) {
      ctx.addIssue({
        code: "custom",
        message:
          max === undefined ? `must be at least ${min}, got ${n}` : `must be between ${min} and ${max}, got ${n}`,
      });
      return z.NEVER;
    }
    return n;
  });
}

/** Seconds ("90"), or a number with s, m or h ("90s", "2m", "1h"), in ms, between 1 s and 1 h. */
const probeTimeoutFlag = z.string().transform((raw, ctx) => {
  const m = /^(\d+)(s|m|h)?$/.exec(raw.trim());
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "s" | "m" | "h"] : NaN;
  if (!(ms >= 1000 && ms <= 3_600_000)) {
    ctx.addIssue({
      code: "custom",
      message: `must be a duration between 1s and 1h, e.g. "60s" or "2m", got ${JSON.stringify(raw)}`,
    });
    return z.NEVER;
  }
  return ms;
});

/** "1500ms", "15s", "2m" or bare seconds, in ms, between min and max. */
function durationFlag(minMs: number, maxMs: number) {
  return z.string().transform((raw, ctx) => {
    const m = /^(\d+)(ms|s|m)?$/.exec(raw.trim());
    const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[(m[2] ?? "s") as "ms" | "s" | "m"] : NaN;
    if (!(ms >= minMs && ms <= maxMs)) {
      ctx.addIssue({
        code: "custom",
        message: `must be a duration between ${minMs}ms and ${maxMs / 1000}s, e.g. "15s" or "1500ms", got ${JSON.stringify(raw)}`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

const onOffFlag = z.string().transform((raw, ctx) => {
  const v = raw.trim().toLowerCase();
  if (v === "on" || v === "off") return v === "on";
  ctx.addIssue({ code: "custom", message: `must be on or off, got ${JSON.stringify(raw)}` });
  return z.NEVER;
});

const bindAddressFlag = z.string().transform((raw, ctx) => {
  const parsed = parseBindAddress(raw.trim());
  if (typeof parsed === "string") {
    ctx.addIssue({ code: "custom", message: parsed });
    return z.NEVER;
  }
  return parsed;
});

const boolFlag = z.string().transform((raw, ctx) => {
  const v = raw.trim().toLowerCase();
  if (["true", "1", "yes", ""].includes(v)) return true;
  if (["false", "0", "no"].includes(v)) return false;
  ctx.addIssue({ code: "custom", message: `must be true or false, got ${JSON.stringify(raw)}` });
  return z.NEVER;
});

// RFC 1123 label: what Kubernetes accepts as a namespace name.
const dnsLabel = z
  .string()
  .regex(DNS1123_LABEL, "must be a lowercase RFC 1123 label")
  .max(63, "must be at most 63 characters");
// RFC 1123 subdomain: what Kubernetes accepts as a Lease name.
const dnsSubdomain = z
  .string()
  .max(253, "must be at most 253 characters")
  .regex(DNS1123_SUBDOMAIN, "must be a lowercase RFC 1123 subdomain");

// Namespace names, comma-separated: each an RFC 1123 label, none twice, none empty.
const namespaceList = z.string().transform((raw, ctx) => {
  const items = raw.split(",").map((s) => s.trim());
  const problem = namespaceListProblem(items);
  if (problem !== undefined) {
    ctx.addIssue({ code: "custom", message: problem });
    return z.NEVER;
  }
  return items;
});

function namespaceListProblem(items: readonly string[]): string | undefined {
  if (items.some((s) => s === ""))
    return `must be namespace names separated by commas, with none empty, got ${JSON.stringify(items.join(","))}`;
  for (const [i, s] of items.entries()) {
    const checked = dnsLabel.safeParse(s);
    if (!checked.success) return `${checked.error.issues[0]?.message}, got ${JSON.stringify(s)}`;
    if (items.indexOf(s) !== i) return `lists ${JSON.stringify(s)} twice`;
  }
  return undefined;
}

// DNS names or IP addresses, comma-separated.
const sanList = z.string().transform((raw, ctx) => {
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const bad = items.find((s) => isIP(s) === 0 && !DNS1123_SUBDOMAIN.test(s));
  if (bad !== undefined) {
    ctx.addIssue({ code: "custom", message: `must be DNS names or IP addresses, got ${JSON.stringify(bad)}` });
    return z.NEVER;
  }
  return items;
});

const schema = z.object({
  kubeconfig: z.string().min(1, "must not be empty").optional(),
  namespace: namespaceList.default([]),
  "metrics-bind-address": bindAddressFlag.prefault(":8080"),
  "health-probe-bind-address": bindAddressFlag.prefault(":8081"),
  "leader-elect": boolFlag.default(false),
  "leader-election-id": dnsSubdomain.default("healthprobe-operator"),
  shards: onOffFlag.prefault("off"),
  "shard-lease-duration": durationFlag(100, 600_000).prefault("15s"),
  "shard-renew-deadline": durationFlag(100, 600_000).prefault("10s"),
  "shard-retry-period": durationFlag(50, 600_000).prefault("2s"),
  "shard-skew-margin": durationFlag(0, 600_000).prefault("2s"),
  "ledger-configmap-name": dnsSubdomain.default("healthprobe-operator-ledger"),
  "operator-namespace": dnsLabel.optional(),
  "max-replacements-per-12h": intFlag(0).prefault("10"),
  "max-replacements-per-12h-per-namespace": intFlag(0).optional(),
  "insecure-diagnostics": boolFlag.default(false),
  "max-endpoints-per-slice": intFlag(1, 1000).prefault("100"),
  "max-concurrent-probes": intFlag(1).prefault("2048"),
  // A quarter of the default slots: one namespace of hanging pods leaves three quarters to the rest,
  // and 512 still covers a busy namespace's probes (a few thousand pods at 10 s, answering in ms).
  "max-probes-in-flight-per-namespace": intFlag(1).prefault("512"),
  // App Service's own minute: long enough for any health endpoint, short enough that a pod that
  // never answers gives its slot back within a minute.
  "max-probe-timeout": probeTimeoutFlag.prefault("60s"),
  "heap-growth-percent": intFlag(0, 400).prefault("50"),
  "webhook-bind-address": bindAddressFlag.prefault("0"),
  "webhook-service-name": dnsLabel.default("healthprobe-operator-webhook"),
  "webhook-secret-name": dnsSubdomain.default("healthprobe-operator-webhook-cert"),
  "webhook-configuration-name": z.union([z.literal(""), dnsSubdomain]).default("healthprobe-operator"),
  "webhook-manage-certificate": boolFlag.default(true),
  "webhook-extra-sans": sanList.default([]),
  "log-level": z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(
      z.enum(LOG_LEVELS, {
        error: (iss) => `must be one of ${LOG_LEVELS.join("|")}, got ${JSON.stringify(iss.input)}`,
      }),
    )
    .default("info"),
  help: boolFlag.default(false),
});

function defaultServiceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

export function parseConfig(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  deps: ConfigDeps = {},
): ParseConfigResult {
  const gathered = rawFlagValues(argv, env);
  if (!gathered.ok) return gathered;
  const { raw } = gathered;

  const result = schema.safeParse(raw);
  if (!result.success) {
    const problem = result.error.issues[0];
    const flag = String(problem?.path[0] ?? "");
    const message = problem?.message ?? "invalid value";
    const given = raw[flag];
    // Transforms already quote the value they got; plain string checks do not.
    const suffix = / got /.test(message) || given === undefined ? "" : `, got ${JSON.stringify(given)}`;
    return { ok: false, message: `--${flag}: ${message}${suffix}` };
  }
  const v = result.data;

  const inCluster = Boolean(env.KUBERNETES_SERVICE_HOST);
  const readSa = deps.readServiceAccountNamespace ?? defaultServiceAccountNamespace;
  let operatorNamespace = v["operator-namespace"];
  if (!operatorNamespace) {
    const candidate = env.POD_NAMESPACE || (inCluster ? readSa() : undefined) || "healthprobe-system";
    const checked = dnsLabel.safeParse(candidate);
    if (!checked.success)
      return {
        ok: false,
        message: `--operator-namespace: ${checked.error.issues[0]?.message}, got ${JSON.stringify(candidate)}`,
      };
    operatorNamespace = checked.data;
  }
  const shards = shardsConfigOf(v);
  if (typeof shards === "string") return { ok: false, message: shards };
  const share = namespaceShareOf(v["max-replacements-per-12h"], v["max-replacements-per-12h-per-namespace"]);
  if (typeof share === "string") return { ok: false, message: `--max-replacements-per-12h-per-namespace: ${share}` };
  return {
    ok: true,
    config: {
      kubeconfig: v.kubeconfig,
      namespaces: v.namespace,
      metricsBindAddress: v["metrics-bind-address"],
      healthProbeBindAddress: v["health-probe-bind-address"],
      leaderElect: v["leader-elect"],
      leaderElectionId: v["leader-election-id"],
      shards,
      ledgerConfigMapName: v["ledger-configmap-name"],
      operatorNamespace,
      maxReplacementsPer12h: v["max-replacements-per-12h"],
      maxReplacementsPer12hPerNamespace: share,
      insecureDiagnostics: v["insecure-diagnostics"],
      maxEndpointsPerSlice: v["max-endpoints-per-slice"],
      maxConcurrentProbes: v["max-concurrent-probes"],
      maxProbesInFlightPerNamespace: v["max-probes-in-flight-per-namespace"],
      maxProbeTimeoutMs: v["max-probe-timeout"],
      heapGrowthPercent: v["heap-growth-percent"],
      webhook: webhookConfigOf(v),
      logLevel: v["log-level"],
      help: v.help,
    },
  };
}

/**
 * The per-namespace share: by default half the cap (rounded down, at least 1), so no single
 * tenant can spend the whole operator-wide cap; a share of 0 would block every namespace.
 */
export function namespaceShareOf(cap: number, given: number | undefined): number | string {
  if (given === undefined) return cap === 0 ? 0 : Math.max(1, Math.floor(cap / 2));
  if (given > cap) return `must be at most --max-replacements-per-12h (${cap}), got ${given}`;
  if (given === 0 && cap > 0)
    return `must be at least 1 while --max-replacements-per-12h is ${cap} (0 would block every namespace), got 0`;
  return given;
}

/** The shard timings must nest as leader election's do: retry period < renew deadline < lease duration. */
function shardsConfigOf(v: z.infer<typeof schema>): ShardsConfig | string {
  const c = {
    enabled: v.shards,
    leaseDurationMs: v["shard-lease-duration"],
    renewDeadlineMs: v["shard-renew-deadline"],
    retryPeriodMs: v["shard-retry-period"],
    skewMarginMs: v["shard-skew-margin"],
  };
  if (c.enabled && v["leader-elect"])
    return "--shards: on replaces --leader-elect (every replica works, each on its own namespaces); give one of them";
  if (!(c.renewDeadlineMs < c.leaseDurationMs))
    return `--shard-renew-deadline: must be below --shard-lease-duration (${c.leaseDurationMs}ms), got ${c.renewDeadlineMs}ms`;
  if (!(c.retryPeriodMs < c.renewDeadlineMs))
    return `--shard-retry-period: must be below --shard-renew-deadline (${c.renewDeadlineMs}ms), got ${c.retryPeriodMs}ms`;
  return c;
}

function webhookConfigOf(v: z.infer<typeof schema>): WebhookConfig {
  return {
    bindAddress: v["webhook-bind-address"],
    serviceName: v["webhook-service-name"],
    secretName: v["webhook-secret-name"],
    configurationName: v["webhook-configuration-name"],
    manageCertificate: v["webhook-manage-certificate"],
    extraSans: v["webhook-extra-sans"],
  };
}

/** For the entry point: the config, or the usage / error printed and the process exited (0 for --help, 2 for a bad flag). */
export function loadConfigOrExit(
  argv: readonly string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): OperatorConfig {
  const parsed = parseConfig(argv, env);
  if (!parsed.ok) {
    process.stderr.write(`${parsed.message}\n`);
    process.exit(2);
  }
  if (parsed.config.help) {
    process.stdout.write(`${usage()}\n`);
    process.exit(0);
  }
  return parsed.config;
}
