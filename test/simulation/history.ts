// Random histories: each step is plain data drawn from a seeded generator over the simulation's
// own record of what it created (never the API's state, which the operator changes), so one
// seed always draws the same steps.
import type { Rng } from "./prng.js";
import { POD_MODES, type PodMode } from "./pod-servers.js";
import type { OwnerKind } from "./snapshot.js";

export const APPS = ["web", "api"] as const;
export const SERVICES = ["web", "api"] as const;
export const POLICIES = ["pol-a", "pol-b", "pol-c"] as const;
/** A crash or leader change comes at most this long after its step began (possibly after the step). */
export const MAX_FAULT_DELAY_MS = 2_500;
export const FAULT_RESOURCES = [
  "endpointslices",
  "healthprobepolicies",
  "pods",
  "configmaps",
  "leases",
  "services",
] as const;

export interface PolicyChoice {
  serviceName: string;
  app: string;
  periodSeconds: number;
  failureThreshold: number;
  maxUnhealthyPercent: number;
  dryRun: boolean;
  maxPerHour: number;
  maxPerDay: number;
  /** The mass-failure breaker's threshold (100: off). */
  pauseAboveUnhealthyPercent: number;
  whenAllUnhealthy: "FailOpen" | "FailClosed";
  /** spec.evaluation.flapQuarantine, or off. */
  flapQuarantine: { flaps: number; window: string; maxBackoff: string } | undefined;
  /** drain.method; absent: EndpointSlice. */
  method?: "EndpointSlice" | "ReadinessGate";
}

export type Action =
  | { kind: "createPod"; name: string; app: string; owner: OwnerKind; mode: PodMode }
  | { kind: "deletePod"; name: string }
  | { kind: "relabelPod"; name: string; app: string }
  | { kind: "kubeletReady"; name: string; ready: boolean }
  | { kind: "probeMode"; name: string; mode: PodMode }
  | { kind: "createPolicy"; name: string; spec: PolicyChoice }
  | { kind: "editPolicy"; name: string; spec: PolicyChoice }
  | { kind: "deletePolicy"; name: string }
  | { kind: "createService"; name: string }
  | { kind: "deleteService"; name: string }
  | { kind: "serviceSelector"; name: string; app: string | undefined }
  | { kind: "apiFault"; fault: "5xx" | "409" | "timeout"; resource: string; count: number }
  | { kind: "dropWatches" }
  | { kind: "expireWatches" }
  | { kind: "crash"; afterMs: number }
  | { kind: "leaderChange"; graceful: boolean; afterMs: number }
  | { kind: "wait" };

export interface Step {
  index: number;
  action: Action;
  /** Simulated time the step lets pass after its action. */
  advanceMs: number;
}

/** What the simulation has created and not deleted, by its own account. */
export class Intent {
  pods: string[] = [];
  policies = new Map<string, PolicyChoice>();
  services = new Set<string>(SERVICES);
  private podCount = 0;

  newPodName(): string {
    return `pod-${++this.podCount}`;
  }
}

export function randomPolicy(rng: Rng, base?: PolicyChoice): PolicyChoice {
  const maxPerHour = rng.int(1, 2);
  const fresh: PolicyChoice = {
    serviceName: rng.pick(SERVICES),
    app: rng.pick(APPS),
    periodSeconds: rng.int(1, 2),
    failureThreshold: rng.int(1, 3),
    maxUnhealthyPercent: rng.pick([25, 40, 50, 100]),
    dryRun: rng.chance(0.15),
    maxPerHour,
    maxPerDay: maxPerHour + rng.int(0, 2),
    pauseAboveUnhealthyPercent: rng.pick([25, 50, 60, 100]),
    whenAllUnhealthy: rng.chance(0.3) ? "FailClosed" : "FailOpen",
    // Back-offs shorter than the 30 s the history settles for, so a quarantine begun at its end is over when convergence is judged.
    flapQuarantine: rng.chance(0.3)
      ? { flaps: rng.int(2, 3), window: "1m", maxBackoff: rng.pick(["5s", "20s"]) }
      : undefined,
    method: rng.chance(0.35) ? "ReadinessGate" : "EndpointSlice",
  };
  if (!base) return fresh;
  // An edit changes one or two fields.
  const out = { ...base };
  const keys = Object.keys(fresh) as Array<keyof PolicyChoice>;
  for (let i = rng.int(1, 2); i > 0; i--) {
    const k = rng.pick(keys);
    (out as Record<string, unknown>)[k] = fresh[k];
    if (k === "maxPerHour" || k === "maxPerDay") out.maxPerDay = Math.max(out.maxPerDay, out.maxPerHour);
  }
  return out;
}

function randomMode(rng: Rng): PodMode {
  return rng.weighted({ healthy: 5, failing: 4, refused: 1, hanging: 0.3, slow: 0.3 } satisfies Record<
    (typeof POD_MODES)[number],
    number
  >);
}

/** The next step, drawn from `rng` and the intent so far (which it updates). */
export function nextStep(rng: Rng, intent: Intent, index: number, leaderElect: boolean, sharded = false): Step {
  const action = drawAction(rng, intent, leaderElect, sharded);
  apply(intent, action);
  const advanceMs = action.kind === "wait" ? rng.int(10, 40) * 1000 : rng.int(1, 6) * 500;
  return { index, action, advanceMs };
}

function drawAction(rng: Rng, intent: Intent, leaderElect: boolean, sharded: boolean): Action {
  const pod = () => rng.pick(intent.pods);
  const hasPods = intent.pods.length > 0;
  const kind = rng.weighted({
    createPod: intent.pods.length < 10 ? 3 : 0.5,
    deletePod: hasPods ? 1 : 0,
    relabelPod: hasPods ? 0.7 : 0,
    kubeletReady: hasPods ? 2 : 0,
    probeMode: hasPods ? 5 : 0,
    createPolicy: intent.policies.size < POLICIES.length ? 1.2 : 0,
    editPolicy: intent.policies.size > 0 ? 1.5 : 0,
    deletePolicy: intent.policies.size > 0 ? 0.5 : 0,
    createService: intent.services.size < SERVICES.length ? 1 : 0,
    deleteService: intent.services.size > 0 ? 0.3 : 0,
    serviceSelector: intent.services.size > 0 ? 0.4 : 0,
    apiFault: 1.5,
    dropWatches: 0.5,
    expireWatches: 0.4,
    // With shards on, kills (and the joins that refill them) are what moves a namespace between replicas.
    crash: sharded ? 2.5 : 0.6,
    leaderChange: leaderElect ? 0.6 : 0,
    wait: 2,
  });
  switch (kind) {
    case "createPod":
      return {
        kind,
        name: intent.newPodName(),
        app: rng.pick(APPS),
        owner: rng.weighted({ controller: 8, bare: 1, mirror: 1 }),
        mode: randomMode(rng),
      };
    case "deletePod":
      return { kind, name: pod() };
    case "relabelPod":
      return { kind, name: pod(), app: rng.pick(APPS) };
    case "kubeletReady":
      return { kind, name: pod(), ready: rng.chance(0.6) };
    case "probeMode":
      return { kind, name: pod(), mode: randomMode(rng) };
    case "createPolicy":
      return { kind, name: rng.pick(POLICIES.filter((p) => !intent.policies.has(p))), spec: randomPolicy(rng) };
    case "editPolicy": {
      const name = rng.pick([...intent.policies.keys()]);
      return { kind, name, spec: randomPolicy(rng, intent.policies.get(name)) };
    }
    case "deletePolicy":
      return { kind, name: rng.pick([...intent.policies.keys()]) };
    case "createService":
      return { kind, name: rng.pick(SERVICES.filter((s) => !intent.services.has(s))) };
    case "deleteService":
      return { kind, name: rng.pick([...intent.services]) };
    case "serviceSelector":
      return { kind, name: rng.pick([...intent.services]), app: rng.chance(0.6) ? rng.pick(APPS) : undefined };
    case "apiFault":
      return {
        kind,
        fault: rng.pick(["5xx", "409", "timeout"] as const),
        resource: rng.pick(FAULT_RESOURCES),
        count: rng.int(1, 3),
      };
    case "crash":
      // Some way into the step, when reconciles and probes may be in flight.
      return { kind, afterMs: rng.int(0, MAX_FAULT_DELAY_MS) };
    case "leaderChange":
      return { kind, graceful: rng.chance(0.5), afterMs: rng.int(0, MAX_FAULT_DELAY_MS) };
    default:
      return { kind } as Action;
  }
}

function apply(intent: Intent, a: Action): void {
  if (a.kind === "createPod") intent.pods.push(a.name);
  if (a.kind === "deletePod") intent.pods = intent.pods.filter((p) => p !== a.name);
  if (a.kind === "createPolicy" || a.kind === "editPolicy") intent.policies.set(a.name, a.spec);
  if (a.kind === "deletePolicy") intent.policies.delete(a.name);
  if (a.kind === "createService") intent.services.add(a.name);
  if (a.kind === "deleteService") intent.services.delete(a.name);
}

export function describeAction(a: Action): string {
  const { kind, ...rest } = a;
  return `${kind} ${JSON.stringify(rest)}`;
}
