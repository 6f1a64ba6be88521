// The policy controller's parts over in-memory caches and an in-memory writer, for unit tests.
import type { EventInput } from "../../adapters/event-recorder.js";
import { HealthStore } from "../../runtime/health-store.js";
import type { ProbeTarget } from "../../runtime/probe-scheduler.js";
import { FakeClock } from "../../runtime/testing/fake-clock.js";
import type { KubeObject, PodObject, PolicyObject, ServiceObject } from "../kube-objects.js";
import { buildPolicyController } from "../policy-controller.js";
import { MemoryCache } from "./memory-cache.js";
import { MemoryWriter } from "./memory-writer.js";
import { NS, aPodObject, aPolicyObject, aServiceObject } from "./objects.js";
import { quietLogger } from "./quiet-logger.js";

export const NOW = Date.UTC(2026, 0, 1, 12);

/** The policy controller over in-memory caches and writer, with a fake clock; pods, policies and Services as given. */
export function setUp(
  opts: {
    policies?: PolicyObject[];
    services?: ServiceObject[];
    pods?: PodObject[];
    replicaSets?: KubeObject[];
    /** Whether this replica leads (a function: asked at each write, as the elector would be). */
    leader?: boolean | (() => boolean);
    builtInSlices?: KubeObject[];
    maxProbeTimeoutMs?: number;
    /** Minimum spacing of status writes per policy (default 1 s). */
    statusIntervalMs?: number;
  } = {},
) {
  const caches = {
    policies: new MemoryCache<PolicyObject>(opts.policies ?? [aPolicyObject()]),
    pods: new MemoryCache<PodObject>(opts.pods ?? [aPodObject("web-a")]),
    services: new MemoryCache<ServiceObject>(opts.services ?? [aServiceObject()]),
    nodes: new MemoryCache<KubeObject>(),
    slices: new MemoryCache<KubeObject>(),
    replicaSets: new MemoryCache<KubeObject>(opts.replicaSets ?? []),
    diagnostics: new MemoryCache<KubeObject>(),
    ledgers: new MemoryCache<KubeObject>(),
    builtInSlices: new MemoryCache<KubeObject>(opts.builtInSlices ?? []),
  };
  const writer = new MemoryWriter();
  writer.seedPolicy(`${NS}/web`, "1");
  writer.seedPolicy(`${NS}/web-too`, "1");
  const scheduled = new Map<string, ProbeTarget[]>();
  const events: EventInput[] = [];
  const health = new HealthStore();
  const clock = new FakeClock(NOW);
  const controller = buildPolicyController({
    caches,
    writer,
    scheduler: { setTargets: (owner, targets) => void scheduled.set(owner, targets), probeNow: () => {} },
    health,
    events: { record: (e) => events.push(e) },
    clock,
    logger: quietLogger(),
    isLeader: typeof opts.leader === "function" ? opts.leader : () => (opts.leader as boolean | undefined) ?? true,
    maxReplacementsPer12h: 10,
    operatorNamespace: "ops",
    maxProbeTimeoutMs: opts.maxProbeTimeoutMs,
    ...(opts.statusIntervalMs !== undefined ? { statusIntervalMs: opts.statusIntervalMs } : {}),
  });
  return { controller, writer, scheduled, caches, events, health, clock };
}
