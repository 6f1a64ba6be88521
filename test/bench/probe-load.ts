// Drives the probe engine (scheduler + a prober) at a fixed rate against one URL and measures
// this process's CPU over a fixed window after a warm-up.
import type { ProbeExecutor } from "../../operator/src/adapters/http-prober.js";
import type { ProbeRequest } from "../../operator/src/domain/probe-request.js";
import { ProbeScheduler, type ProbeTarget } from "../../operator/src/runtime/probe-scheduler.js";
import { waitFor } from "../support/wait-for.js";
import { FlagError } from "./flags.js";

export interface ProbeLoadResult {
  probes: number;
  failures: number;
  cpuSeconds: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  scheduleLagP99Ms: number;
  /** Requests the target counted in the window, when it can tell. */
  targetRequests?: number;
  firstFailure?: string;
}

export interface ProbeLoadOptions {
  /** The HTTP(S) target; not used when `request` is given. */
  url?: string;
  /** The i-th target's request, each distinct so deduplication does not merge them (any probe type). */
  request?: (i: number) => ProbeRequest;
  rate: number;
  seconds: number;
  warmupSeconds?: number;
  execute: ProbeExecutor;
  /** The scheduler's start grid (its default when omitted). */
  batchMs?: number;
  targetRequests?: () => Promise<number | undefined>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

export async function runProbeLoad(opts: ProbeLoadOptions): Promise<ProbeLoadResult> {
  const requestFor = opts.request ?? httpRequests(opts.url ?? "");
  const periodMs = 1000;
  const count = Math.max(1, Math.round((opts.rate * periodMs) / 1000));
  const warmupMs = (opts.warmupSeconds ?? 2) * 1000;
  const windowMs = opts.seconds * 1000;
  let measuring = false;
  let probes = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const latencies: number[] = [];

  const scheduler = new ProbeScheduler({
    execute: opts.execute,
    maxConcurrent: 1024,
    ...(opts.batchMs !== undefined ? { batchMs: opts.batchMs } : {}),
    lagSamples: Math.max(4096, Math.ceil(opts.rate * opts.seconds)),
    onResult: (_owner, _id, outcome) => {
      if (!measuring) return;
      probes++;
      if (!outcome.success) {
        failures++;
        firstFailure ??= outcome.result;
      }
      latencies.push(outcome.latencyMs);
    },
  });
  const targets: ProbeTarget[] = Array.from({ length: count }, (_, i) => ({
    id: `t-${i}`,
    request: requestFor(i),
    judgement: { timeoutMs: 1000, statusCodes: [[200, 299]] },
    periodMs,
  }));
  scheduler.setTargets("bench/probe", targets);
  await sleep(warmupMs);

  const requests0 = await opts.targetRequests?.();
  measuring = true;
  const cpu0 = process.cpuUsage();
  await sleep(windowMs);
  const cpu = process.cpuUsage(cpu0);
  measuring = false;
  const requests1 = await opts.targetRequests?.();
  const stats = scheduler.stats();
  scheduler.stop();
  await waitFor(() => scheduler.stats().inFlight === 0, { timeoutMs: 10_000, what: "probes in flight to finish" });

  latencies.sort((a, b) => a - b);
  const result: ProbeLoadResult = {
    probes,
    failures,
    cpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 1e4) / 1e4,
    latencyP50Ms: quantile(latencies, 0.5),
    latencyP99Ms: quantile(latencies, 0.99),
    scheduleLagP99Ms: stats.lagP99Ms,
  };
  if (requests0 !== undefined && requests1 !== undefined) result.targetRequests = requests1 - requests0 - 1;
  if (firstFailure) result.firstFailure = firstFailure;
  return result;
}

/** GET requests to a loopback URL; distinct queries keep them distinct, so deduplication does not merge them. */
function httpRequests(raw: string): (i: number) => ProbeRequest {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FlagError(`--url: ${raw}: must be an http or https URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new FlagError(`--url: ${raw}: must be http or https`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!["127.0.0.1", "::1", "localhost"].includes(host) && !host.startsWith("127.")) {
    throw new FlagError(`--url: ${raw}: only loopback targets are allowed`);
  }
  const address = host === "localhost" ? "127.0.0.1" : host;
  const basePath = `${url.pathname}${url.search ? `${url.search}&` : "?"}`;
  return (i) => ({
    scheme: url.protocol === "https:" ? "HTTPS" : "HTTP",
    address,
    port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
    path: `${basePath}n=${i}`,
    method: "GET",
    headers: [],
  });
}
