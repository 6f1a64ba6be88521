// What wakes what: every rule that turns a cache change into a policy, replacement, Service or
// namespace key, in one table (besides the caches, only a probe result that changes a verdict
// wakes a policy and its replacement, operator.ts, and a changed replacement outcome its policy,
// replacement-outcomes.ts). A rule sees the object before and after the change (undefined on add and on
// delete), so no handler keeps previous values of its own. Adding a wake-up is one row here.
import { KIND } from "../api/group.js";
import type { Caches, Enqueue } from "./caches.js";
import { holdingOf, isGatePolicy } from "./gate-holders.js";
import {
  drainMethodOf,
  hasReadinessGate,
  keyOf,
  serviceNameOf,
  splitKey,
  type PodObject,
  type PolicyObject,
} from "./kube-objects.js";

/** The queues a rule may feed; each has one key type. */
export type WakeQueue = "policy" | "replacement" | "service" | "namespace";

type ObjectOf<S extends keyof Caches> = Caches[S] extends { list(): Array<infer T> } ? T : never;

/** What the rules may read besides the change itself. */
export interface WakeContext {
  caches: Caches;
  /** The policies whose selector the pod matches (probe-targets.ts). */
  policiesForPod(pod: PodObject): Iterable<string>;
  /** The Services whose slices this operator manages, in a namespace. */
  managedServices(namespace: string): Iterable<{ namespace: string; service: string }>;
}

export interface WakeRule<S extends keyof Caches = keyof Caches> {
  /** A sentence: what change wakes which keys. */
  name: string;
  source: S;
  queue: WakeQueue;
  /** Whether the change matters; absent: every change does. */
  when?: (old: ObjectOf<S> | undefined, now: ObjectOf<S> | undefined) => boolean;
  keys: (old: ObjectOf<S> | undefined, now: ObjectOf<S> | undefined, ctx: WakeContext) => Iterable<string>;
}

const rule = <S extends keyof Caches>(r: WakeRule<S>): WakeRule => r as unknown as WakeRule;
const either = <T>(old: T | undefined, now: T | undefined): T => (now ?? old) as T;
const namespaceOf = (o: { metadata?: { namespace?: string } } | undefined) => o?.metadata?.namespace ?? "";
/** The policies (by key) an object's ownerReferences name. */
const owningPolicies = (o: {
  metadata?: { namespace?: string; ownerReferences?: Array<{ kind?: string; name?: string }> };
}) =>
  (o.metadata?.ownerReferences ?? [])
    .filter((r) => r.kind === KIND && r.name)
    .map((r) => `${namespaceOf(o)}/${r.name}`);

/**
 * Whether what `aspect` reads of a policy changed (undefined once deleted): a status write, the
 * commonest change by far, must not wake every Service or namespace a policy touches (500
 * policies writing status would make that quadratic). An add always counts.
 */
export const aspectChanged =
  <T>(aspect: (o: T) => string | undefined) =>
  (old: T | undefined, now: T | undefined): boolean =>
    old === undefined || aspect(old) !== (now === undefined ? undefined : aspect(now));

/** What Service ownership reads of a policy (service-ownership.ts): the Service it names, its drain method, whether it is deleting, its age. */
export function claimOf(p: PolicyObject): string {
  return JSON.stringify([
    serviceNameOf(p) ?? "",
    drainMethodOf(p),
    !!p.metadata?.deletionTimestamp,
    p.metadata?.creationTimestamp ?? "",
  ]);
}

const namingService = (ctx: WakeContext, namespace: string, service: string | undefined): string[] =>
  service === undefined
    ? []
    : ctx.caches.policies
        .list(namespace)
        .filter((p) => serviceNameOf(p) === service)
        .map(keyOf);
const sliceService = (slice: { metadata?: { labels?: Record<string, string> } }) =>
  slice.metadata?.labels?.["kubernetes.io/service-name"];
const revisionOf = (rs: { metadata?: { annotations?: Record<string, string> } }) =>
  rs.metadata?.annotations?.["deployment.kubernetes.io/revision"];
/** The pods (by uid) the policy's status lists as awaiting replacement (Unhealthy, replacement enabled: with replaceAfter). */
const awaitingOf = (p: PolicyObject): string[] =>
  ((p.status as { pods?: Array<{ uid?: string; replaceAfter?: string }> } | undefined)?.pods ?? [])
    .filter((pod) => pod.replaceAfter !== undefined)
    .map((pod) => pod.uid ?? "");
export const awaitsReplacement = (p: PolicyObject): boolean => awaitingOf(p).length > 0;
const zoneOf = (node: { metadata?: { labels?: Record<string, string> } }) =>
  node.metadata?.labels?.["topology.kubernetes.io/zone"];

const slicesNamingService = (source: "slices" | "builtInSlices") =>
  rule({
    name: `a change of ${source === "slices" ? "a managed" : "a built-in"} EndpointSlice wakes the policies naming its Service`,
    source,
    queue: "policy",
    keys: (old, now, ctx) => {
      const s = either(old, now);
      return namingService(ctx, namespaceOf(s), sliceService(s));
    },
  });

export const WAKE_RULES: readonly WakeRule[] = [
  rule({
    name: "any change of a policy wakes the policy itself",
    source: "policies",
    queue: "policy",
    keys: (old, now) => [keyOf(either(old, now))],
  }),
  // A policy pointed elsewhere (or deleted) frees the old Service, and a policy waiting on it as ServiceClaimed may take over now.
  rule({
    name: "any change of a policy wakes the policies naming the Service it named before or names now",
    source: "policies",
    queue: "policy",
    keys: (old, now, ctx) =>
      [...new Set([old && serviceNameOf(old), now && serviceNameOf(now)])].flatMap((s) =>
        namingService(ctx, namespaceOf(either(old, now)), s),
      ),
  }),
  // Which policy holds a gated pod's condition depends on every ReadinessGate policy of the namespace: the others must write what one left at once (seed 20536).
  rule({
    name: "a change in which pods a policy holds wakes the other ReadinessGate policies of its namespace",
    source: "policies",
    queue: "policy",
    when: aspectChanged(holdingOf),
    keys: (old, now, ctx) => {
      const key = keyOf(either(old, now));
      return ctx.caches.policies
        .list(namespaceOf(either(old, now)))
        .filter((o) => keyOf(o) !== key && isGatePolicy(o))
        .map(keyOf);
    },
  }),
  rule({
    name: "any change of a pod wakes the policies whose selector matches it",
    source: "pods",
    queue: "policy",
    keys: (old, now, ctx) => ctx.policiesForPod(either(old, now)),
  }),
  // A new ReplicaSet or a new revision (a rollback) can make another one the newest; a status update of a scaling ReplicaSet must not scan the pods.
  rule({
    name: "a ReplicaSet added, deleted or given a new revision wakes the policies of its pods",
    source: "replicaSets",
    queue: "policy",
    when: (old, now) => old === undefined || now === undefined || revisionOf(old) !== revisionOf(now),
    keys: (old, now, ctx) => {
      const rs = either(old, now);
      const owned = ctx.caches.pods
        .list(rs.metadata?.namespace)
        .filter((pod) => pod.metadata?.ownerReferences?.some((r) => r.uid === rs.metadata?.uid));
      return owned.flatMap((pod) => [...ctx.policiesForPod(pod)]);
    },
  }),
  rule({
    name: "any change of a Service wakes the policies that name it",
    source: "services",
    queue: "policy",
    keys: (old, now, ctx) => {
      const s = either(old, now);
      return namingService(ctx, namespaceOf(s), s.metadata?.name);
    },
  }),
  slicesNamingService("slices"),
  slicesNamingService("builtInSlices"),
  // A diagnostics ConfigMap created or deleted changes its policy's status.diagnostics.
  rule({
    name: "a change of a diagnostics ConfigMap wakes the policy that owns it",
    source: "diagnostics",
    queue: "policy",
    keys: (old, now) => owningPolicies(either(old, now)),
  }),
  // A ledger changed or deleted by someone else: status.replacements mirrors it, and a deleted one is restored.
  rule({
    name: "a change of a policy's ledger ConfigMap wakes the policy that owns it",
    source: "ledgers",
    queue: "policy",
    keys: (old, now) => owningPolicies(either(old, now)),
  }),
  // The replacement controller meets the policy's pass through its status: a pod listed with
  // replaceAfter is awaiting replacement (the controller then requeues itself for the window, a
  // budget, a back-off); the change that lists none any more lets it clear its condition.
  rule({
    name: "a change of a policy whose status lists a pod awaiting replacement wakes its replacement",
    source: "policies",
    queue: "replacement",
    when: (old, now) => old === undefined || now === undefined || awaitsReplacement(old) || awaitsReplacement(now),
    keys: (old, now) => [keyOf(either(old, now))],
  }),
  // A pod's own change (terminating, its owner, a nudge) bears on its replacement: looked at again.
  rule({
    name: "a change of a pod that a policy's status lists as awaiting replacement wakes that policy's replacement",
    source: "pods",
    queue: "replacement",
    keys: (old, now, ctx) => {
      const pod = either(old, now);
      return [...ctx.policiesForPod(pod)].filter((key) => {
        const [namespace, name] = splitKey(key);
        const policy = ctx.caches.policies.get(namespace, name);
        return policy !== undefined && awaitingOf(policy).includes(pod.metadata?.uid ?? "");
      });
    },
  }),
  // A ledger deleted or edited by someone else is read again (and a deleted one restored) before any charge.
  rule({
    name: "a change of a policy's ledger ConfigMap wakes its replacement",
    source: "ledgers",
    queue: "replacement",
    keys: (old, now) => owningPolicies(either(old, now)),
  }),
  // Only a zone change matters to the slices; node heartbeats must not wake every policy.
  rule({
    name: "a node added or given another zone wakes every policy",
    source: "nodes",
    queue: "policy",
    when: (old, now) => old === undefined || (now !== undefined && zoneOf(old) !== zoneOf(now)),
    keys: (_old, _now, ctx) => ctx.caches.policies.list().map(keyOf),
  }),
  rule({
    name: "a change of a managed EndpointSlice wakes its Service",
    source: "slices",
    queue: "service",
    keys: (old, now) => {
      const s = either(old, now);
      const svc = sliceService(s);
      return svc ? [`${namespaceOf(s)}/${svc}`] : [];
    },
  }),
  rule({
    name: "any change of a Service wakes the Service",
    source: "services",
    queue: "service",
    keys: (old, now) => [keyOf(either(old, now))],
  }),
  // A policy deleted or pointed at another Service leaves the slices of the old one unmanaged.
  rule({
    name: "a change in what a policy claims wakes the managed Services of its namespace",
    source: "policies",
    queue: "service",
    when: aspectChanged(claimOf),
    keys: (old, now, ctx) =>
      [...ctx.managedServices(namespaceOf(either(old, now)))].map((s) => `${s.namespace}/${s.service}`),
  }),
  rule({
    name: "a change of a pod with the readiness gate wakes its namespace",
    source: "pods",
    queue: "namespace",
    when: (old, now) => hasReadinessGate(either(old, now)),
    keys: (old, now) => [namespaceOf(either(old, now))],
  }),
  // Only a change in which pods a policy holds can leave a gated pod held by none.
  rule({
    name: "a change in which pods a policy holds wakes its namespace",
    source: "policies",
    queue: "namespace",
    when: aspectChanged(holdingOf),
    keys: (old, now) => [namespaceOf(either(old, now))],
  }),
];

/** The keys one change wakes, by queue: what registerWakeRules enqueues, and what the tests read. */
export function wakesOf(
  rules: readonly WakeRule[],
  source: keyof Caches,
  old: unknown,
  now: unknown,
  ctx: WakeContext,
): Array<[WakeQueue, string]> {
  const out: Array<[WakeQueue, string]> = [];
  for (const r of rules) {
    if (r.source !== source || (r.when && !r.when(old as never, now as never))) continue;
    for (const key of r.keys(old as never, now as never, ctx)) out.push([r.queue, key]);
  }
  return out;
}

/** Registers the rules on the caches: one handler per cache, feeding the queues given. */
export function registerWakeRules(
  ctx: WakeContext,
  queues: Partial<Record<WakeQueue, Enqueue>>,
  rules: readonly WakeRule[] = WAKE_RULES,
): void {
  const wanted = rules.filter((r) => queues[r.queue] !== undefined);
  for (const source of new Set(wanted.map((r) => r.source))) {
    const cache = ctx.caches[source] as { onChange(h: (obj: unknown, type: string, old: unknown) => void): void };
    cache.onChange((obj, type, old) => {
      const [before, after] =
        type === "add" ? [undefined, obj] : type === "delete" ? [old ?? obj, undefined] : [old, obj];
      for (const [queue, key] of wakesOf(wanted, source, before, after, ctx)) queues[queue]?.add(key);
    });
  }
}

/** Every policy key (start of leadership, resync). */
export function enqueueAll(caches: Caches, queue: Enqueue): void {
  for (const p of caches.policies.list()) queue.add(keyOf(p));
}

/** Every namespace with a pod that has the readiness gate. */
export function enqueueGatedNamespaces(caches: Caches, queue: Enqueue): void {
  for (const ns of new Set(
    caches.pods
      .list()
      .filter(hasReadinessGate)
      .map((p) => p.metadata?.namespace ?? ""),
  ))
    queue.add(ns);
}

/** Every Service with slices this operator manages. */
export function enqueueManagedServices(
  managed: () => Iterable<{ namespace: string; service: string }>,
  queue: Enqueue,
): void {
  for (const s of managed()) queue.add(`${s.namespace}/${s.service}`);
}

/**
 * Every key of one namespace (this replica took it over): its policies and their replacement, the Services whose slices
 * it manages there, and the namespace itself when a pod there has the readiness gate.
 */
export function enqueueNamespace(
  ctx: WakeContext,
  queues: Partial<Record<WakeQueue, Enqueue>>,
  namespace: string,
): void {
  for (const p of ctx.caches.policies.list(namespace)) {
    queues.policy?.add(keyOf(p));
    queues.replacement?.add(keyOf(p));
  }
  for (const s of ctx.managedServices(namespace)) queues.service?.add(`${s.namespace}/${s.service}`);
  if (ctx.caches.pods.list(namespace).some(hasReadinessGate)) queues.namespace?.add(namespace);
}
