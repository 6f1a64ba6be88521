// Tries a policy's probe against one address before the policy is applied:
//   npm run -s probe -- --policy policy.yaml --address 10.1.2.3 [--port 8080] [--count 3] [--interval 1s]
//                       [--secret name/key=value ...]
// Only JSON lines on stdout (`-s` keeps npm's own banner off it): one per probe, then the
// verdict the policy's evaluation would reach on those results. Exit 0 when the last probe
// succeeded, 1 when it failed, 2 for a bad flag or policy (stderr, one line per error, field first).
//
// Probes are spaced by --interval (default 1s), not by periodSeconds: trying a policy should
// not take a minute per probe. The probe itself uses the policy's timeout and judgement.
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parseAllDocuments } from "yaml";
import type { ProbeExecutor } from "./adapters/http-prober.js";
import { createProber } from "./adapters/prober.js";
import { parseDuration } from "./api/duration.js";
import { KIND } from "./api/group.js";
import { parsePolicySpec } from "./api/parse-policy.js";
import type { HealthProbePolicySpec } from "./api/policy-schema.js";
import { computeHealth, type HealthRecord } from "./domain/health.js";
import { computeProbeOutcome } from "./domain/probe-judgement.js";
import { planProbe, type PlannedProbe, type SecretRef } from "./domain/probe-plan.js";
import { evaluationSettingsOf, type EvaluationSettings } from "./domain/types.js";

export interface ProbeCommandIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  readFile?: (path: string) => Promise<string>;
  execute?: ProbeExecutor;
  /** Waits between probes; injectable so tests need not wait. */
  delay?: (ms: number) => Promise<void>;
}

const USAGE =
  "usage: npm run -s probe -- --policy <policy.yaml> --address <ip> [--port <n>] [--count <n>] [--interval <duration, default 1s>] [--secret name/key=value ...]";

class UsageError extends Error {}

/** Runs the command; resolves to the exit code. */
export async function runProbeCommand(argv: string[], io: ProbeCommandIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(err.message);
      return 2;
    }
    throw err;
  }
}

async function run(argv: string[], io: ProbeCommandIo): Promise<number> {
  const flags = parseFlags(argv);
  if (flags === "help") {
    io.stdout(USAGE);
    return 0;
  }
  const { spec, probe } = await planFromPolicy(flags, io);
  return probeRepeatedly(flags, probe, evaluationSettingsOf({ ...spec.evaluation, startupGraceSeconds: 0 }), io);
}

interface Flags {
  policy: string;
  address: string;
  count: number;
  intervalMs: number;
  portOverride: number | undefined;
  /** "name/key" to the value given with --secret. */
  secrets: Map<string, Uint8Array>;
}

function parseFlags(argv: string[]): Flags | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        policy: { type: "string" },
        address: { type: "string" },
        port: { type: "string" },
        count: { type: "string", default: "1" },
        interval: { type: "string", default: "1s" },
        secret: { type: "string", multiple: true, default: [] },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) return "help";
  if (!values.policy) throw new UsageError(`--policy: Required value\n${USAGE}`);
  if (!values.address) throw new UsageError(`--address: Required value\n${USAGE}`);
  if (isIP(values.address) === 0)
    throw new UsageError(
      `--address: Invalid value: ${JSON.stringify(values.address)}: must be an IPv4 or IPv6 address`,
    );
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1)
    throw new UsageError(`--count: Invalid value: ${JSON.stringify(values.count)}: must be a positive integer`);
  let intervalMs: number;
  try {
    intervalMs = /^[0-9]+(\.[0-9]+)?$/.test(values.interval)
      ? Number(values.interval) * 1000
      : parseDuration(values.interval);
  } catch {
    throw new UsageError(
      `--interval: Invalid value: ${JSON.stringify(values.interval)}: must be a duration such as 1s or 500ms`,
    );
  }
  let portOverride: number | undefined;
  if (values.port !== undefined) {
    portOverride = Number(values.port);
    if (!/^[0-9]+$/.test(values.port) || portOverride < 1 || portOverride > 65535) {
      throw new UsageError(`--port: Invalid value: ${JSON.stringify(values.port)}: must be 1-65535`);
    }
  }
  const secrets = new Map<string, Uint8Array>();
  for (const s of values.secret) {
    const m = /^([^/=]+)\/([^=]+)=(.*)$/s.exec(s);
    if (!m) throw new UsageError(`--secret: Invalid value: must be name/key=value`);
    secrets.set(`${m[1]}/${m[2]}`, new TextEncoder().encode(m[3]));
  }
  return { policy: values.policy, address: values.address, count, intervalMs, portOverride, secrets };
}

/** Reads and checks the policy, and plans its probe of the address. */
async function planFromPolicy(
  flags: Flags,
  io: ProbeCommandIo,
): Promise<{ spec: HealthProbePolicySpec; probe: PlannedProbe }> {
  const { portOverride, secrets } = flags;
  const spec = await readPolicySpec(flags.policy, io.readFile ?? ((p) => readFile(p, "utf8")));
  const parsed = parsePolicySpec(spec);
  if (!parsed.ok) throw new UsageError(parsed.errors.map((e) => `${e.field}: ${e.message}`).join("\n"));
  const probe = parsed.spec.probe;
  if (typeof probe.port === "string" && !/^[0-9]+$/.test(probe.port) && portOverride === undefined) {
    throw new UsageError(
      `spec.probe.port: ${JSON.stringify(probe.port)} is a container port name: pass --port with its number`,
    );
  }
  const planned = planProbe(
    portOverride === undefined ? probe : { ...probe, port: portOverride },
    { ip: flags.address, containers: [] },
    (ref: SecretRef) => secrets.get(`${ref.name}/${ref.key}`),
  );
  if (!planned.ok) {
    const hint =
      planned.field.includes("secretKeyRef") || planned.field.includes("secretRef")
        ? " (pass --secret name/key=value)"
        : "";
    throw new UsageError(`${planned.field}: ${planned.message}${hint}`);
  }
  return { spec: parsed.spec, probe: planned.probe };
}

/** Probes `count` times, a JSON line each, then the verdict line; the exit code follows the last probe. */
async function probeRepeatedly(
  flags: Flags,
  probe: PlannedProbe,
  settings: EvaluationSettings,
  io: ProbeCommandIo,
): Promise<number> {
  const execute = io.execute ?? createProber();
  const delay = io.delay ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const { request, judgement } = probe;
  const readBody = !!judgement.bodyContains && request.method === "GET";
  let success = false;
  let health: HealthRecord | undefined;
  let reason = "";
  for (let i = 0; i < flags.count; i++) {
    const started = Date.now();
    const outcome = computeProbeOutcome(await execute(request, judgement.timeoutMs, readBody), judgement);
    success = outcome.success;
    // No startup grace: the address is probed as a pod past its grace would be.
    const next = computeHealth(
      health,
      { success: outcome.success, failureClass: outcome.failureClass, at: outcome.finishedAt },
      settings,
      0,
    );
    health = next.record;
    if (next.transition) reason = next.transition.reason;
    const line: Record<string, unknown> = { success: outcome.success };
    if (outcome.statusCode !== undefined) line.statusCode = outcome.statusCode;
    // Whole milliseconds, as in `result`, whatever the probe took.
    line.latencyMs = Math.round(outcome.latencyMs);
    line.result = outcome.result;
    io.stdout(JSON.stringify(line));
    if (i < flags.count - 1) await delay(Math.max(0, started + flags.intervalMs - Date.now()));
  }
  const state = health?.state ?? "Unknown";
  io.stdout(JSON.stringify({ verdict: state, reason: state === "Unknown" ? undecided(settings, health) : reason }));
  return success ? 0 : 1;
}

/** Why the probes run did not decide: what the evaluation still needs. */
function undecided(settings: EvaluationSettings, health: HealthRecord | undefined): string {
  const w = settings.window;
  if (w)
    return `${health?.samples.length ?? 0} of the ${w.sampleSize} samples the window needs: pass --count ${w.sampleSize} or more`;
  const ok = health?.consecutiveSuccesses ?? 0;
  const failed = health?.consecutiveFailures ?? 0;
  return `${ok} consecutive successes of successThreshold=${settings.successThreshold}, ${failed} consecutive failures of failureThreshold=${settings.failureThreshold}`;
}

/** The spec of the first HealthProbePolicy in a (possibly multi-document) YAML file. */
async function readPolicySpec(path: string, read: (p: string) => Promise<string>): Promise<unknown> {
  let text: string;
  try {
    text = await read(path);
  } catch (err) {
    throw new UsageError(`--policy: cannot read ${path}: ${(err as Error).message}`);
  }
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new UsageError(`--policy: ${path} is not YAML`);
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) throw new UsageError(`--policy: ${path}: document ${i + 1}: ${doc.errors[0]?.message}`);
    const obj = doc.toJS() as { kind?: unknown; spec?: unknown } | null;
    if (obj && typeof obj === "object" && obj.kind === KIND) {
      if (obj.spec === undefined) throw new UsageError("spec: Required value");
      return obj.spec;
    }
  }
  throw new UsageError(`--policy: no ${KIND} in ${path}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runProbeCommand(process.argv.slice(2), {
    stdout: (l) => process.stdout.write(`${l}\n`),
    stderr: (l) => process.stderr.write(`${l}\n`),
  }).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`probe: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 2;
    },
  );
}
