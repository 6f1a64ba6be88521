// Replacement limits end to end: per-policy hourly and daily budgets, the operator-wide 12 h
// cap and PodDisruptionBudgets, with the ReplicaSet controller recreating what is evicted. An
// offset clock makes windows of an hour, a day or 12 hours slide on demand.
import { describe, expect, it } from "@jest/globals";
import { formatSlot } from "../../operator/src/domain/budget.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, type Obj } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const AFTER_MS = 30_000;
/** Generous deadlines: the suite shares two cores with everything else. */
const WAIT_MS = 20_000;
const HOUR_MS = 3_600_000;

const bed = useBed();

function livePods(n: number, app = "web"): Promise<Obj[]> {
  return queries.livePods(bed, n, { app, timeoutMs: WAIT_MS });
}

/** An app: a selector-less Service, a ReplicaSet of `replicas` and a policy replacing after 30 s. */
async function givenApp(app: string, replicas: number, replacement: Record<string, unknown>): Promise<Obj[]> {
  await bed.cluster.create(aService(app, bed.cluster.namespace));
  await bed.cluster.create(aReplicaSet(app, bed.cluster.namespace, replicas, { app }));
  const pods = await livePods(replicas, app);
  await bed.cluster.create(
    aPolicy(app, bed.cluster.namespace, {
      serviceName: app,
      selector: { app },
      replacement: { enabled: true, after: "30s", ...replacement },
    }),
  );
  return pods;
}

function statusOf(policy = "web"): Promise<Record<string, any> | undefined> {
  return queries.policyStatus(bed.cluster, policy);
}

function nameOf(p: Obj): string {
  return p.metadata!.name!;
}

const condition = queries.conditionOf;

function evictions(opts: { pod?: string; code?: number } = {}) {
  return queries.evictionsOf(bed.cluster, opts);
}

function operatorLedger(): Promise<Array<Record<string, string>>> {
  return queries.operatorLedger(bed.cluster);
}

async function allUnhealthy(names: string[], policy = "web"): Promise<void> {
  await waitFor(
    async () => {
      const pods = (await statusOf(policy))?.pods ?? [];
      return names.every((n) =>
        pods.some(
          (p: { name: string; state: string; replaceAfter?: string }) =>
            p.name === n && p.state === "Unhealthy" && p.replaceAfter,
        ),
      );
    },
    { timeoutMs: WAIT_MS, what: `${names.join(", ")} Unhealthy in the status of ${policy}` },
  );
}

async function blockedCondition(
  reason: string,
  policy = "web",
  extra: (c: Record<string, any>) => boolean = () => true,
): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const c = condition(await statusOf(policy), "ReplacementBlocked");
      return c?.status === "True" && c.reason === reason && extra(c) ? c : undefined;
    },
    { timeoutMs: WAIT_MS, what: `ReplacementBlocked=True reason ${reason} on ${policy}` },
  );
}

async function gone(name: string): Promise<void> {
  await waitFor(async () => !(await bed.cluster.get("v1", "Pod", name)), {
    timeoutMs: WAIT_MS,
    what: `${name} to be gone`,
  });
}

/** Serves the pod its ReplicaSet made in place of the evicted ones (healthy), and waits until its policy sees it Healthy. */
async function serveReplacement(known: Obj[], app = "web"): Promise<void> {
  const names = new Set(known.map(nameOf));
  const fresh = await waitFor(
    async () => {
      const list = await bed.cluster.list("v1", "Pod", bed.cluster.namespace, `app=${app}`);
      return list.find((p) => !names.has(nameOf(p)) && !p.metadata?.deletionTimestamp && p.status?.podIP);
    },
    { timeoutMs: WAIT_MS, what: `the pod replacing one of ${app}` },
  );
  await bed.farm.serve(fresh.status.podIP);
  bed.farm.healthy(fresh.status.podIP);
  await waitFor(
    async () =>
      (await statusOf(app))?.pods?.some(
        (p: { name: string; state: string }) => p.name === nameOf(fresh) && p.state === "Healthy",
      ),
    {
      timeoutMs: WAIT_MS,
      what: `${nameOf(fresh)} Healthy`,
    },
  );
}

/** Reconciles finished so far, from the operator's own metrics. */
async function reconcileCount(): Promise<number> {
  const metric = await bed.operator.metrics.registry.getSingleMetric("healthprobe_reconcile_duration_seconds")?.get();
  const policyCounts = metric?.values.filter(
    (v) => (v as { metricName?: string }).metricName?.endsWith("_count") && v.labels.controller === "policy",
  );
  return policyCounts?.reduce((n, v) => n + v.value, 0) ?? 0;
}

/** Wakes the policies selecting a pod (a pod event) and waits until a reconcile ran after it. */
async function nudge(pod: string, n: number): Promise<void> {
  const before = await reconcileCount();
  await bed.cluster.patch({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: pod, namespace: bed.cluster.namespace, annotations: { "example.com/nudge": String(n) } },
  });
  await waitFor(async () => (await reconcileCount()) > before, {
    timeoutMs: WAIT_MS,
    what: "a reconcile after the nudge",
  });
}

/** Of two failing pods, the one the operator evicted first, and the other. */
async function firstEvicted(pods: Obj[]): Promise<[Obj, Obj]> {
  const evicted = await waitFor(() => evictions({ code: 201 })[0]?.name, {
    timeoutMs: WAIT_MS,
    what: "a first eviction",
  });
  const first = pods.find((p) => nameOf(p) === evicted)!;
  return [first, pods.find((p) => p !== first)!];
}

describe("replacement budgets", () => {
  it("maxPerHour 1: of two due pods one is replaced, the other waits on Budget until the hour slides", async () => {
    // A third pod stays Healthy: with none Healthy the policy would fail open and replace nothing.
    // 2 of 3 Unhealthy is above the breaker's default of 50%: it is off here, the budgets are the subject.
    const all = await givenApp("web", 3, { maxPerHour: 1, maxPerDay: 3, pauseAboveUnhealthyPercent: 100 });
    const pods = all.slice(0, 2);
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 3, { timeoutMs: WAIT_MS, what: "all pods Healthy" });

    for (const p of pods) bed.farm.failing(p.status.podIP);
    await allUnhealthy(pods.map(nameOf));
    bed.clock.advance(AFTER_MS);

    const [first, second] = await firstEvicted(pods);
    await gone(nameOf(first));
    await serveReplacement(all);
    const charged = await waitFor(async () => (await statusOf())?.replacements?.[0], {
      timeoutMs: WAIT_MS,
      what: "the first charge in the ledger",
    });
    const blocked = await blockedCondition("Budget");
    expect(blocked.message).toContain(
      `${nameOf(second)}: hourly budget of policy shop/web used 1/1, next slot ${formatSlot(Date.parse(charged.time) + HOUR_MS)}`,
    );
    expect(evictions()).toHaveLength(1);
    expect(await bed.cluster.get("v1", "Pod", nameOf(second))).toBeDefined();

    bed.clock.advance(HOUR_MS);
    await gone(nameOf(second));
    const st = await waitFor(
      async () => {
        const s = await statusOf();
        return s?.replacements?.length === 2 ? s : undefined;
      },
      { timeoutMs: WAIT_MS, what: "two charges in the ledger" },
    );
    expect(st.replacements.map((r: { uid: string }) => r.uid)).toEqual([first.metadata!.uid, second.metadata!.uid]);
    expect(Date.parse(st.replacements[1].time) - Date.parse(st.replacements[0].time)).toBeGreaterThanOrEqual(HOUR_MS);
    expect(evictions({ code: 201 }).map((e) => e.name)).toEqual([nameOf(first), nameOf(second)]);
  });

  it("maxPerDay 1: the second due pod still waits after the hour, on the daily budget, and goes when the day slides", async () => {
    // A third pod stays Healthy: with none Healthy the policy would fail open and replace nothing.
    // 2 of 3 Unhealthy is above the breaker's default of 50%: it is off here, the budgets are the subject.
    const all = await givenApp("web", 3, { maxPerHour: 1, maxPerDay: 1, pauseAboveUnhealthyPercent: 100 });
    const pods = all.slice(0, 2);
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 3, { timeoutMs: WAIT_MS, what: "all pods Healthy" });

    for (const p of pods) bed.farm.failing(p.status.podIP);
    await allUnhealthy(pods.map(nameOf));
    bed.clock.advance(AFTER_MS);
    const [first, second] = await firstEvicted(pods);
    await gone(nameOf(first));
    await serveReplacement(all);
    const charged = await waitFor(async () => (await statusOf())?.replacements?.[0], {
      timeoutMs: WAIT_MS,
      what: "the first charge in the ledger",
    });
    const dayEnds = formatSlot(Date.parse(charged.time) + 24 * HOUR_MS);

    // An hour later the hourly budget has room again; the daily one still holds the pod back.
    bed.clock.advance(HOUR_MS);
    await nudge(nameOf(second), 1);
    const blocked = await blockedCondition("Budget", "web", (c) => !c.message.includes("hourly"));
    expect(blocked.message).toContain(
      `${nameOf(second)}: daily budget of policy shop/web used 1/1, next slot ${dayEnds}`,
    );
    expect(evictions()).toHaveLength(1);

    bed.clock.advance(23 * HOUR_MS);
    await gone(nameOf(second));
    expect(evictions({ code: 201 }).map((e) => e.name)).toEqual([nameOf(first), nameOf(second)]);
  });

  it("the operator-wide cap (--max-replacements-per-12h 1) holds back a second policy with room of its own until 12 h slide", async () => {
    const web = await givenApp("web", 2, { maxPerHour: 5, maxPerDay: 5 });
    const api = await givenApp("api", 2, { maxPerHour: 5, maxPerDay: 5 });
    await bed.startOperator(["--max-replacements-per-12h", "1"], { clock: bed.clock });
    await waitFor(async () => (await statusOf("web"))?.healthy === 2 && (await statusOf("api"))?.healthy === 2, {
      timeoutMs: WAIT_MS,
      what: "all pods Healthy",
    });

    bed.farm.failing(web[0]!.status.podIP);
    bed.farm.failing(api[0]!.status.podIP);
    await allUnhealthy([nameOf(web[0]!)], "web");
    await allUnhealthy([nameOf(api[0]!)], "api");
    bed.clock.advance(AFTER_MS);

    const [first, second] = await firstEvicted([web[0]!, api[0]!]);
    const [firstPolicy, secondPolicy] = first === web[0] ? ["web", "api"] : ["api", "web"];
    await gone(nameOf(first));
    // The new pod must not compete for the one operator-wide slot: it is served healthy.
    await serveReplacement(firstPolicy === "web" ? web : api, firstPolicy);
    const ledger = await waitFor(
      async () => {
        const l = await operatorLedger();
        return l.length === 1 ? l : undefined;
      },
      { timeoutMs: WAIT_MS, what: "the operator-wide ledger to hold the first replacement" },
    );
    expect(ledger[0]).toMatchObject({ policy: `shop/${firstPolicy}`, uid: first.metadata!.uid });
    const blocked = await blockedCondition("Budget", secondPolicy);
    expect(blocked.message).toContain(
      `${nameOf(second)}: operator-wide budget used 1/1 in 12h, next slot ${formatSlot(Date.parse(ledger[0]!.time!) + 12 * HOUR_MS)}`,
    );
    expect(evictions()).toHaveLength(1);

    bed.clock.advance(12 * HOUR_MS);
    await gone(nameOf(second));
    const last = await waitFor(async () => (await operatorLedger()).find((e) => e.uid === second.metadata!.uid), {
      timeoutMs: WAIT_MS,
      what: "the second replacement in the operator-wide ledger",
    });
    expect(Date.parse(last.time!) - Date.parse(ledger[0]!.time!)).toBeGreaterThanOrEqual(12 * HOUR_MS);
    expect(evictions({ code: 201 }).map((e) => e.name)).toEqual([nameOf(first), nameOf(second)]);
  });

  it("a PodDisruptionBudget refusal (429) uses no budget and waits with reason PodDisruptionBudget; the eviction goes through once the PDB allows it", async () => {
    const pods = await givenApp("web", 2, { maxPerHour: 1, maxPerDay: 1 });
    await bed.cluster.create({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: { minAvailable: 2, selector: { matchLabels: { app: "web" } } },
    });
    await waitFor(
      async () => (await bed.cluster.get("policy/v1", "PodDisruptionBudget", "web"))?.status?.currentHealthy === 2,
      { timeoutMs: WAIT_MS, what: "the PDB to count both pods" },
    );
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: WAIT_MS, what: "both pods Healthy" });

    const victim = pods[0]!;
    bed.farm.failing(victim.status.podIP);
    await allUnhealthy([nameOf(victim)]);
    bed.clock.advance(AFTER_MS);

    const blocked = await blockedCondition("PodDisruptionBudget");
    // Worded by the refused attempt itself, or by the wait that follows it.
    expect(blocked.message).toMatch(
      new RegExp(
        `${nameOf(victim)}: (eviction refused by a PodDisruptionBudget|a PodDisruptionBudget refused the eviction, retry at)`,
      ),
    );
    expect(evictions({ code: 429 }).length).toBeGreaterThanOrEqual(1);
    expect(evictions({ code: 201 })).toHaveLength(0);
    // Refunded: neither ledger keeps the refused attempt.
    await waitFor(
      async () => ((await statusOf())?.replacements ?? []).length === 0 && (await operatorLedger()).length === 0,
      { timeoutMs: WAIT_MS, what: "both ledgers empty" },
    );
    expect((await statusOf())?.replacedInLastDay).toBe(0);

    await bed.cluster.patch({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: { minAvailable: 1 },
    });
    await waitFor(
      async () => (await bed.cluster.get("policy/v1", "PodDisruptionBudget", "web"))?.status?.disruptionsAllowed === 1,
      { timeoutMs: WAIT_MS, what: "the PDB to allow one disruption" },
    );
    // Past the longest backoff: the next attempt is made, and the budget (1 per hour) still has its slot.
    bed.clock.advance(300_000);
    await gone(nameOf(victim));
    expect(evictions({ code: 201 }).map((e) => e.name)).toEqual([nameOf(victim)]);
    const st = await waitFor(
      async () => {
        const s = await statusOf();
        return s?.replacements?.length === 1 ? s : undefined;
      },
      { timeoutMs: WAIT_MS, what: "one charge in the ledger" },
    );
    expect(st.replacements[0]).toMatchObject({ pod: nameOf(victim), uid: victim.metadata!.uid });
    expect((await operatorLedger()).map((e) => e.uid)).toEqual([victim.metadata!.uid]);
  });
});
