import { describe, expect, it } from "@jest/globals";
import { parsePolicySpec } from "../api/parse-policy.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import { HealthStore } from "../runtime/health-store.js";
import type { ProbeTarget } from "../runtime/probe-scheduler.js";
import type { PodObject, PolicyObject } from "./kube-objects.js";
import { ProbeTargets } from "./probe-targets.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { NS, aPodObject, aPolicyObject } from "./testing/objects.js";

function setUp(pods: PodObject[], policies: PolicyObject[] = [aPolicyObject()]) {
  const scheduled = new Map<string, ProbeTarget[]>();
  const writer = new MemoryWriter();
  const clock = new FakeClock();
  const podCache = new MemoryCache(pods);
  const part = new ProbeTargets({
    policies: new MemoryCache(policies),
    pods: podCache,
    secrets: writer,
    scheduler: { setTargets: (o, t) => void scheduled.set(o, t), probeNow: () => {} },
    health: new HealthStore(),
    clock,
  });
  return { part, scheduled, writer, clock, podCache };
}

function specOf(extra: Record<string, unknown> = {}) {
  const parsed = parsePolicySpec(aPolicyObject("web", extra).spec);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.spec;
}

describe("the probe-targets part", () => {
  it.each([
    { name: "a Running, Ready pod with an IP is a target", pod: aPodObject("a"), target: true },
    { name: "a Pending pod is selected but not a target", pod: aPodObject("a", { phase: "Pending" }), target: false },
    {
      name: "a terminating pod is selected but not a target",
      pod: aPodObject("a", { terminating: true }),
      target: false,
    },
    {
      name: "a kubelet-NotReady pod is still a target (the policy probes it)",
      pod: aPodObject("a", { ready: false }),
      target: true,
    },
  ])("$name", ({ pod, target }) => {
    const { part } = setUp([pod]);
    const s = part.select("shop/web", NS, specOf());
    expect(s.selected).toHaveLength(1);
    expect(s.targets.length === 1).toBe(target);
  });

  it("selects only pods whose labels match", () => {
    const { part } = setUp([aPodObject("a"), aPodObject("b", { labels: { app: "api" } })]);
    expect(part.select("shop/web", NS, specOf()).selected.map((p) => p.metadata?.name)).toEqual(["a"]);
  });

  it("keeps the selection right as pods are added, relabelled and deleted after the first reconcile", () => {
    const { part, podCache } = setUp([aPodObject("a"), aPodObject("b")]);
    const names = (extra: Record<string, unknown> = {}) =>
      part
        .select("shop/web", NS, specOf(extra))
        .selected.map((p) => p.metadata?.name)
        .sort();
    expect(names()).toEqual(["a", "b"]);
    podCache.put(aPodObject("c"));
    podCache.put(aPodObject("a", { labels: { app: "api" } }));
    podCache.remove(NS, "b");
    podCache.put(aPodObject("d", { labels: { app: "api" } }));
    expect(names()).toEqual(["c"]);
    // A new selector is matched afresh.
    expect(names({ selector: { matchLabels: { app: "api" } } })).toEqual(["a", "d"]);
  });

  it("keeps nothing of a namespace its pod cache forgot (a shard let go): a pod relabelled meanwhile is no longer the policy's, and the policy selects afresh when the pods come back", () => {
    const { part, podCache } = setUp([aPodObject("a"), aPodObject("b")]);
    part.select("shop/web", NS, specOf());
    expect(part.policiesForPod(aPodObject("a"))).toEqual(["shop/web"]);
    podCache.forget(NS);
    // Listed again when the namespace returns: "a" now carries another label, "b" is gone.
    podCache.put(aPodObject("a", { labels: { app: "api" } }));
    podCache.put(aPodObject("c"));
    expect(part.policiesForPod(aPodObject("a", { labels: { app: "api" } }))).toEqual([]);
    expect(part.select("shop/web", NS, specOf()).selected.map((p) => p.metadata?.name)).toEqual(["c"]);
  });

  it("tells another policy's targets now: from the namespace before its first selection, from its index after", () => {
    const { part, podCache } = setUp([
      aPodObject("a"),
      aPodObject("b", { phase: "Pending" }),
      aPodObject("c", { labels: { app: "api" } }),
    ]);
    const names = () =>
      part
        .targetsOf("shop/web", NS, specOf())
        .map((p) => p.metadata?.name)
        .sort();
    expect(names()).toEqual(["a"]);
    part.select("shop/web", NS, specOf());
    podCache.put(aPodObject("d"));
    expect(names()).toEqual(["a", "d"]);
  });

  it("skips a pod that lacks the named probe port, and probes the others", async () => {
    const other = aPodObject("b");
    other.spec!.containers = [{ name: "app", ports: [{ name: "metrics", containerPort: 9090 }] }];
    const { part } = setUp([aPodObject("a"), other]);
    const plan = await part.plan(NS, "web", specOf({ probe: { port: "http", path: "/healthz" } }), [
      aPodObject("a"),
      other,
    ]);
    expect(plan.ok && plan.targets.map((t) => t.id)).toEqual(["uid-a"]);
  });

  it("fails the policy on a missing header Secret, naming the field, and reads it again after the retry interval", async () => {
    const spec = specOf({
      probe: {
        port: 8080,
        path: "/healthz",
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "auth", key: "token" } } }],
      },
    });
    const { part, writer, clock } = setUp([aPodObject("a")]);
    const first = await part.plan(NS, "web", spec, [aPodObject("a")]);
    expect(first.ok ? "" : first.field).toBe("spec.probe.headers[0].valueFrom.secretKeyRef");
    writer.secrets.set(`${NS}/auth/token`, new TextEncoder().encode("Bearer x"));
    writer.secretAllowedPolicies.set(`${NS}/auth`, "web");
    expect((await part.plan(NS, "web", spec, [aPodObject("a")])).ok).toBe(false);
    clock.advance(5_000);
    expect((await part.plan(NS, "web", spec, [aPodObject("a")])).ok).toBe(true);
  });

  it("refuses a Secret that does not name the policy (SecretNotPermitted, naming the field and the fix), with or without targets, and uses it once annotated", async () => {
    const spec = specOf({
      probe: {
        port: 8080,
        path: "/healthz",
        headers: [
          { name: "X-Env", value: "prod" },
          { name: "Authorization", valueFrom: { secretKeyRef: { name: "auth", key: "token" } } },
        ],
      },
    });
    const { part, writer, clock } = setUp([aPodObject("a")]);
    writer.secrets.set(`${NS}/auth/token`, new TextEncoder().encode("Bearer x"));
    for (const targets of [[aPodObject("a")], []]) {
      const refused = await part.plan(NS, "web", spec, targets);
      expect(refused).toEqual({
        ok: false,
        reason: "SecretNotPermitted",
        field: "spec.probe.headers[1].valueFrom.secretKeyRef",
        message:
          'Secret "auth" does not allow policy "web" to use it; its owner can allow it: kubectl annotate secret auth healthprobe.io/allowed-policies=web',
      });
    }
    writer.secretAllowedPolicies.set(`${NS}/auth`, "api, web");
    clock.advance(5_000);
    const planned = await part.plan(NS, "web", spec, [aPodObject("a")]);
    expect(planned.ok && planned.targets[0]!.request.headers).toEqual([
      { name: "X-Env", value: "prod" },
      { name: "Authorization", value: "Bearer x" },
    ]);
  });

  it("refuses a signature Secret that allows other policies only, and sees an annotation removed within the Secret TTL", async () => {
    const spec = specOf({
      probe: { port: 8080, path: "/healthz", signature: { secretRef: { name: "sig", key: "key" } } },
    });
    const { part, writer, clock } = setUp([aPodObject("a")]);
    writer.secrets.set(`${NS}/sig/key`, new TextEncoder().encode("k"));
    writer.secretAllowedPolicies.set(`${NS}/sig`, "api");
    const refused = await part.plan(NS, "web", spec, [aPodObject("a")]);
    expect(!refused.ok && [refused.reason, refused.field]).toEqual([
      "SecretNotPermitted",
      "spec.probe.signature.secretRef",
    ]);
    writer.secretAllowedPolicies.set(`${NS}/sig`, "*");
    clock.advance(5_000);
    expect((await part.plan(NS, "web", spec, [aPodObject("a")])).ok).toBe(true);
    writer.secretAllowedPolicies.delete(`${NS}/sig`);
    clock.advance(60_000);
    expect((await part.plan(NS, "web", spec, [aPodObject("a")])).ok).toBe(false);
  });

  it("fails the policy on a Secret the API server refuses the operator (SecretForbidden, naming the field and the RBAC it lacks), and reads it again after the retry interval", async () => {
    const spec = specOf({
      probe: {
        port: 8080,
        path: "/healthz",
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "auth", key: "token" } } }],
      },
    });
    const { part, writer, clock } = setUp([aPodObject("a")]);
    writer.forbiddenSecrets.add(`${NS}/auth`);
    writer.secrets.set(`${NS}/auth/token`, new TextEncoder().encode("Bearer x"));
    writer.secretAllowedPolicies.set(`${NS}/auth`, "web");
    const refused = await part.plan(NS, "web", spec, [aPodObject("a")]);
    expect(refused).toEqual({
      ok: false,
      reason: "SecretForbidden",
      field: "spec.probe.headers[0].valueFrom.secretKeyRef",
      message:
        `the API server refuses the operator Secret "auth" (403 Forbidden: secrets "auth" is forbidden: User "operator" cannot get resource "secrets" in API group "" in the namespace "${NS}"); ` +
        "the operator needs get on secrets in this namespace (the chart's rbac.secrets=true), or the probe must not use a Secret",
    });
    writer.forbiddenSecrets.delete(`${NS}/auth`);
    expect((await part.plan(NS, "web", spec, [aPodObject("a")])).ok).toBe(false);
    clock.advance(5_000);
    expect((await part.plan(NS, "web", spec, [aPodObject("a")])).ok).toBe(true);
  });

  it.each([
    {
      name: "a timeout over --max-probe-timeout is capped and says so, naming the field",
      timeoutSeconds: 120,
      maxProbeTimeoutMs: 60_000,
      capped: "spec.probe.timeoutSeconds 120 capped to 60: the operator's --max-probe-timeout is 60s",
    },
    {
      name: "a timeout equal to the cap says nothing",
      timeoutSeconds: 60,
      maxProbeTimeoutMs: 60_000,
      capped: undefined,
    },
    { name: "no cap says nothing", timeoutSeconds: 3600, maxProbeTimeoutMs: 0, capped: undefined },
  ])("$name", async ({ timeoutSeconds, maxProbeTimeoutMs, capped }) => {
    const writer = new MemoryWriter();
    const part = new ProbeTargets({
      policies: new MemoryCache([aPolicyObject()]),
      pods: new MemoryCache([aPodObject("a")]),
      secrets: writer,
      scheduler: { setTargets: () => {}, probeNow: () => {} },
      health: new HealthStore(),
      clock: new FakeClock(),
      maxProbeTimeoutMs,
    });
    const plan = await part.plan(
      NS,
      "web",
      specOf({ probe: { port: 8080, path: "/healthz", periodSeconds: 3600, timeoutSeconds } }),
      [aPodObject("a")],
    );
    expect(plan.ok && plan.timeoutCapped).toBe(capped);
  });

  it.each([
    {
      name: "a hostNetwork pod without the annotation is not probed, and says why",
      hostNetwork: true,
      annotations: undefined,
      probed: false,
    },
    {
      name: "a hostNetwork pod with the annotation set to true is probed",
      hostNetwork: true,
      annotations: { "healthprobe.io/probe-host-network": "true" },
      probed: true,
    },
    {
      name: "a pod on its own network is probed without the annotation",
      hostNetwork: false,
      annotations: undefined,
      probed: true,
    },
  ])("$name", async ({ hostNetwork, annotations, probed }) => {
    const pod = aPodObject("a");
    pod.spec!.hostNetwork = hostNetwork;
    if (annotations) pod.metadata!.annotations = annotations;
    const { part } = setUp([pod]);
    const plan = await part.plan(NS, "web", specOf(), [pod]);
    if (!plan.ok) throw new Error(plan.message);
    expect(plan.targets.map((t) => t.id)).toEqual(probed ? ["uid-a"] : []);
    expect(plan.notProbed.get("uid-a")).toBe(
      probed ? undefined : "hostNetwork pod (add annotation healthprobe.io/probe-host-network=true to probe it)",
    );
  });

  it("wakes the policy that used to select a relabelled pod", () => {
    const { part } = setUp([aPodObject("a")]);
    part.select("shop/web", NS, specOf());
    expect(part.policiesForPod(aPodObject("a", { labels: { app: "other" } }))).toEqual(["shop/web"]);
  });

  it.each([
    {
      name: "a policy in the cache wakes for a pod its selector matches, before its first reconcile",
      labels: { app: "web" },
      selectedFirst: false,
      want: ["shop/web"],
    },
    {
      name: "a policy does not wake for a pod it neither selects nor selected",
      labels: { app: "other" },
      selectedFirst: false,
      want: [],
    },
    {
      name: "a policy that selected the pod at its last reconcile wakes after the pod is relabelled",
      labels: { app: "other" },
      selectedFirst: true,
      want: ["shop/web"],
    },
  ])("$name", ({ labels, selectedFirst, want }) => {
    const { part } = setUp([aPodObject("a")]);
    if (selectedFirst) part.select("shop/web", NS, specOf());
    expect(part.policiesForPod(aPodObject("a", { labels }))).toEqual(want);
  });

  it("follows the policy cache: a new policy, a changed selector and a deleted policy", () => {
    const policies = new MemoryCache<PolicyObject>([]);
    const part = new ProbeTargets({
      policies,
      pods: new MemoryCache<PodObject>([]),
      secrets: new MemoryWriter(),
      scheduler: { setTargets: () => {}, probeNow: () => {} },
      health: new HealthStore(),
      clock: new FakeClock(),
    });
    const api = aPodObject("a", { labels: { app: "api" } });
    policies.put(aPolicyObject("web"));
    expect(part.policiesForPod(api)).toEqual([]);
    policies.put(aPolicyObject("web", { selector: { matchLabels: { app: "api" } } }));
    expect(part.policiesForPod(api)).toEqual(["shop/web"]);
    policies.remove(NS, "web");
    expect(part.policiesForPod(api)).toEqual([]);
  });

  it("stops waking a policy for a pod once it stops probing", () => {
    const { part } = setUp([aPodObject("a")], []);
    part.select("shop/web", NS, specOf());
    part.stop("shop/web");
    expect(part.policiesForPod(aPodObject("a", { labels: { app: "other" } }))).toEqual([]);
  });

  it("stops probing by giving the scheduler no targets", () => {
    const { part, scheduled } = setUp([aPodObject("a")]);
    part.stop("shop/web");
    expect(scheduled.get("shop/web")).toEqual([]);
  });
});
