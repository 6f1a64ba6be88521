// The operator's flags: names, help text, and how argv and HEALTHPROBE_<FLAG> environment
// variables become one raw value per flag (flags win) before config.ts validates them.
import { parseArgs } from "node:util";

export interface FlagSpec {
  name: string;
  kind: "string" | "boolean";
  description: string;
}

export const FLAGS: FlagSpec[] = [
  {
    name: "kubeconfig",
    kind: "string",
    description: "Path to a kubeconfig; in-cluster config or ~/.kube/config when unset.",
  },
  {
    name: "namespace",
    kind: "string",
    description: 'Only watch these namespaces, comma-separated, e.g. "shop,payments" (default: all namespaces).',
  },
  {
    name: "metrics-bind-address",
    kind: "string",
    description: 'Address for /metrics, e.g. ":8080"; "0" disables. (default ":8080")',
  },
  {
    name: "health-probe-bind-address",
    kind: "string",
    description: 'Address for /healthz, /readyz, /debug/targets; "0" disables. (default ":8081")',
  },
  {
    name: "leader-elect",
    kind: "boolean",
    description: "Elect a leader through a Lease so only one replica writes. (default false)",
  },
  { name: "leader-election-id", kind: "string", description: 'Name of the Lease. (default "healthprobe-operator")' },
  {
    name: "shards",
    kind: "string",
    description:
      "on: share namespaces across every live replica (each holds a shard Lease; a namespace is acted on by one replica); off: --leader-elect decides. (default off)",
  },
  {
    name: "shard-lease-duration",
    kind: "string",
    description: 'How long a replica\'s shard Lease lasts unrenewed, e.g. "15s" or "1500ms". (default "15s")',
  },
  {
    name: "shard-renew-deadline",
    kind: "string",
    description:
      'A replica acts on nothing once its shard Lease was not renewed for this long; below the lease duration. (default "10s")',
  },
  {
    name: "shard-retry-period",
    kind: "string",
    description: 'How often a replica renews its shard Lease and re-plans; below the renew deadline. (default "2s")',
  },
  {
    name: "shard-skew-margin",
    kind: "string",
    description:
      "How far apart the replicas' clocks may be: a dead replica's namespaces move this long after its lease expired. (default \"2s\")",
  },
  {
    name: "ledger-configmap-name",
    kind: "string",
    description: 'ConfigMap of the operator-wide replacement ledger. (default "healthprobe-operator-ledger")',
  },
  {
    name: "operator-namespace",
    kind: "string",
    description:
      "Namespace of the Lease and the operator-wide ledger. (default: the pod's namespace, else healthprobe-system)",
  },
  {
    name: "max-replacements-per-12h",
    kind: "string",
    description: "Operator-wide cap on pod replacements in any 12 h window, >= 0. (default 10)",
  },
  {
    name: "max-replacements-per-12h-per-namespace",
    kind: "string",
    description:
      "What one namespace may spend of the operator-wide cap in any 12 h window, 1 to the cap (0 only with a cap of 0). (default half the cap rounded down, at least 1)",
  },
  {
    name: "insecure-diagnostics",
    kind: "boolean",
    description:
      "Serve /metrics and /debug/targets to anyone, without TokenReview and SubjectAccessReview; for local runs only. (default false)",
  },
  {
    name: "max-endpoints-per-slice",
    kind: "string",
    description: "Endpoints per EndpointSlice, 1-1000. (default 100)",
  },
  {
    name: "max-concurrent-probes",
    kind: "string",
    description:
      "Probes in flight at once, >= 1; a probe of a dead pod holds its slot for the whole timeout. (default 2048)",
  },
  {
    name: "max-probes-in-flight-per-namespace",
    kind: "string",
    description:
      "Probes of one namespace in flight at once, >= 1; waiting probes are started round-robin between namespaces. (default 512)",
  },
  {
    name: "max-probe-timeout",
    kind: "string",
    description:
      'Longest probe timeout, 1s-1h, e.g. "60s", "2m" or "90" (seconds); a policy asking for more is probed with this and says so. (default "60s")',
  },
  {
    name: "heap-growth-percent",
    kind: "string",
    description:
      "How far the heap may grow past what the last full GC kept before the next one, 0-400; 0 leaves it to V8 (up to 300). Lower: less memory, a little more CPU. (default 50)",
  },
  {
    name: "webhook-bind-address",
    kind: "string",
    description:
      'Address of the readiness-gate admission webhook (HTTPS, /mutate-pods), e.g. ":9443"; "0" disables. (default "0")',
  },
  {
    name: "webhook-service-name",
    kind: "string",
    description:
      'Service the API server calls the webhook through; the certificate names <service>.<operator-namespace>.svc. (default "healthprobe-operator-webhook")',
  },
  {
    name: "webhook-secret-name",
    kind: "string",
    description:
      'Secret of the webhook\'s serving certificate, in the operator namespace. (default "healthprobe-operator-webhook-cert")',
  },
  {
    name: "webhook-configuration-name",
    kind: "string",
    description:
      'MutatingWebhookConfiguration whose caBundle the operator keeps; "" for none. (default "healthprobe-operator")',
  },
  {
    name: "webhook-manage-certificate",
    kind: "boolean",
    description:
      "Make and rotate the certificate in the Secret and patch the caBundle; false: only read the Secret (e.g. cert-manager's). (default true)",
  },
  {
    name: "webhook-extra-sans",
    kind: "string",
    description:
      "Comma-separated DNS names or IP addresses the certificate also names, for a webhook reached by URL. (default none)",
  },
  { name: "log-level", kind: "string", description: "trace|debug|info|warn|error. (default info)" },
  { name: "help", kind: "boolean", description: "Show this help." },
];

export function usage(): string {
  const lines = [
    "Usage: healthprobe-operator [flags]",
    "",
    "Flags (each also read from HEALTHPROBE_<FLAG>, e.g. HEALTHPROBE_LOG_LEVEL; flags win):",
  ];
  for (const f of FLAGS) lines.push(`  --${f.name}${f.kind === "string" ? " <value>" : ""}`.padEnd(40) + f.description);
  return lines.join("\n");
}

export function envName(flag: string): string {
  return `HEALTHPROBE_${flag.toUpperCase().replace(/-/g, "_")}`;
}

/** The raw string value of every flag given, from the environment and then argv; or the message of a malformed command line. */
export function rawFlagValues(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): { ok: true; raw: Record<string, string> } | { ok: false; message: string } {
  const raw: Record<string, string> = {};
  for (const f of FLAGS) {
    const fromEnv = env[envName(f.name)];
    if (fromEnv !== undefined && f.name !== "help") raw[f.name] = fromEnv;
  }

  // parseArgs rejects "--bool=value"; accept it like Go's flag package does.
  // A string flag takes the next argument as its value even when it starts with "-" (as Go's flag does).
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const m = /^--([^=]+)=(.*)$/s.exec(arg);
    const spec = m && FLAGS.find((f) => f.name === m[1]);
    const bare = /^--([^=]+)$/.exec(arg);
    const bareSpec = bare && FLAGS.find((f) => f.name === bare[1]);
    if (m && spec?.kind === "boolean") raw[spec.name] = m[2] ?? "";
    else if (bareSpec?.kind === "string" && i + 1 < argv.length) args.push(`${arg}=${argv[++i]}`);
    else args.push(arg);
  }

  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(FLAGS.map((f) => [f.name, { type: f.kind }])) as Record<
      string,
      { type: "string" | "boolean" }
    >;
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (err) {
    return { ok: false, message: describeParseError(err) };
  }
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined) raw[name] = typeof value === "boolean" ? String(value) : value;
  }
  return { ok: true, raw };
}

function describeParseError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const flag = /'(-{1,2}[^'\s]+)/.exec(e.message ?? "")?.[1];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag ${flag ?? e.message}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return `${flag ?? "flag"}: needs a value`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${/'([^']*)'/.exec(e.message ?? "")?.[1] ?? ""}`.trim();
    default:
      return e.message ?? String(err);
  }
}
