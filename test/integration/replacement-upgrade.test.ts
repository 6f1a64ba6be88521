// The upgrade to a policy ledger in a ConfigMap of its own: a policy whose status.replacements
// holds the charges an earlier version made there, and no ledger ConfigMap. The operator moves
// them into the ConfigMap as soon as it starts, and counts them: a due replacement is blocked on
// the budget they spent, and nothing is replaced beyond it. A ledger ConfigMap deleted by hand is
// restored from status.replacements, its mirror. One offset clock, so the hour passes on demand.
import { describe, expect, it } from "@jest/globals";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { formatInstant } from "../../operator/src/domain/budget.js";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, kubeConfigFor } from "./support/cluster.js";
import { conditionOf, evictionsOf, livePods, policyLedger, policyStatus } from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const AFTER_MS = 30_000;
const HOUR_MS = 3_600_000;
const WAIT_MS = 20_000;
const LEDGER = "web-healthprobe-ledger";

const bed = useBed();

/** The policy with the status an earlier version wrote: its ledger in status.replacements. */
async function policyWithStatusLedger(replacements: Array<Record<string, string>>): Promise<void> {
  const ns = bed.cluster.namespace;
  await bed.cluster.create(aService("web", ns));
  await bed.cluster.create(aReplicaSet("web", ns, 3));
  await bed.cluster.create(
    aPolicy("web", ns, {
      replacement: { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 3, pauseAboveUnhealthyPercent: 100 },
    }),
  );
  const policy = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))!;
  const status = {
    observedGeneration: 1,
    conditions: [],
    targets: 0,
    healthy: 0,
    unhealthy: 0,
    unknown: 0,
    drained: 0,
    replacedInLastDay: replacements.length,
    pods: [],
    replacements,
  };
  await kubeConfigFor(bed.cluster.server)
    .makeApiClient(CustomObjectsApi)
    .replaceNamespacedCustomObjectStatus({
      group: "healthprobe.io",
      version: "v1alpha1",
      namespace: ns,
      plural: "healthprobepolicies",
      name: "web",
      body: { ...policy, status },
    });
}

/** One charge an earlier version made, `minutesAgo` before the operator's clock. */
const earlierCharge = (minutesAgo: number) => ({
  pod: "web-replaced-earlier",
  uid: "uid-replaced-earlier",
  time: formatInstant(bed.clock.now() - minutesAgo * 60_000),
  method: "Evict",
});

describe("the upgrade from a ledger in status.replacements", () => {
  it("moves the ledger into its ConfigMap at start, and a due replacement is blocked on the budget it spent", async () => {
    const old = earlierCharge(10);
    await policyWithStatusLedger([old]);
    const pods = await livePods(bed, 3, { timeoutMs: WAIT_MS });
    await bed.startOperator([], { clock: bed.clock });

    // The first start moves the ledger across, before anything is due.
    const moved = await waitFor(
      async () => ((await policyLedger(bed.cluster)).length === 1 ? policyLedger(bed.cluster) : undefined),
      {
        timeoutMs: WAIT_MS,
        what: "the ledger ConfigMap with the earlier charge",
      },
    );
    expect(moved).toEqual([{ policy: `${bed.cluster.namespace}/web`, ...old }]);
    const policy = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))!;
    const [cm, ...others] = await bed.cluster.list(
      "v1",
      "ConfigMap",
      bed.cluster.namespace,
      "healthprobe.io/ledger=policy",
    );
    expect(others).toEqual([]);
    expect(cm!.metadata!.name).toBe(LEDGER);
    expect(cm!.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ kind: "HealthProbePolicy", name: "web", uid: policy.metadata!.uid }),
    ]);
    await waitFor(async () => (await policyStatus(bed.cluster))?.healthy === 3, {
      timeoutMs: WAIT_MS,
      what: "all pods Healthy",
    });

    // Two pods fail and come due: the hour's budget of one was spent by the earlier version.
    for (const p of pods.slice(0, 2)) bed.farm.failing(p.status.podIP);
    await waitFor(
      async () =>
        (await policyStatus(bed.cluster))?.pods?.filter((p: { state: string }) => p.state === "Unhealthy").length === 2,
      { timeoutMs: WAIT_MS, what: "two pods Unhealthy" },
    );
    bed.clock.advance(AFTER_MS + 1_000);
    const blocked = await waitFor(
      async () => {
        const c = conditionOf(await policyStatus(bed.cluster), "ReplacementBlocked");
        return c?.status === "True" && c.reason === "Budget" ? c : undefined;
      },
      { timeoutMs: WAIT_MS, what: "replacement blocked on Budget" },
    );
    expect(blocked.message).toContain("hourly budget");
    expect(evictionsOf(bed.cluster)).toEqual([]);
    expect((await policyStatus(bed.cluster))?.replacements).toEqual([
      expect.objectContaining({ uid: old.uid, time: old.time }),
    ]);

    // Once the earlier charge is an hour old, the budget has room for one, and one only.
    bed.clock.advance(Date.parse(old.time) + HOUR_MS + 1_000 - bed.clock.now());
    await waitFor(() => evictionsOf(bed.cluster, { code: 201 }).length === 1, {
      timeoutMs: WAIT_MS,
      what: "one eviction",
    });
    await waitFor(
      async () => {
        const st = await policyStatus(bed.cluster);
        const c = conditionOf(st, "ReplacementBlocked");
        return st?.replacements?.length === 2 && c?.status === "True" && c.reason === "Budget";
      },
      { timeoutMs: WAIT_MS, what: "the second pod blocked on Budget, the mirror showing both charges" },
    );
    expect((await policyLedger(bed.cluster)).map((e) => e.uid)).toEqual([
      old.uid,
      evictionsUid(pods, evictionsOf(bed.cluster, { code: 201 })[0]!.name!),
    ]);
    expect(evictionsOf(bed.cluster)).toHaveLength(1);
  }, 90_000);

  it("restores a ledger ConfigMap deleted by hand from status.replacements", async () => {
    const old = earlierCharge(10);
    await policyWithStatusLedger([old]);
    await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await policyLedger(bed.cluster)).length === 1, {
      timeoutMs: WAIT_MS,
      what: "the ledger moved",
    });
    await waitFor(async () => (await policyStatus(bed.cluster))?.targets === 3, {
      timeoutMs: WAIT_MS,
      what: "a status write",
    });
    const before = await bed.cluster.get("v1", "ConfigMap", LEDGER);

    await bed.cluster.remove("v1", "ConfigMap", LEDGER);
    const restored = await waitFor(
      async () => {
        const cm = await bed.cluster.get("v1", "ConfigMap", LEDGER);
        return cm && cm.metadata!.uid !== before!.metadata!.uid ? cm : undefined;
      },
      { timeoutMs: WAIT_MS, what: "the ledger ConfigMap restored" },
    );
    expect(JSON.parse(restored.data!.ledger!)).toEqual([{ policy: `${bed.cluster.namespace}/web`, ...old }]);
  }, 60_000);

  it("never writes a user's ConfigMap of the ledger's name, and replaces nothing for the policy while it is there", async () => {
    const mine = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: LEDGER, namespace: bed.cluster.namespace },
      data: { "app.conf": "mine" },
    };
    await bed.cluster.create(mine);
    await policyWithStatusLedger([earlierCharge(10)]);
    await bed.startOperator([], { clock: bed.clock });
    const blocked = await waitFor(
      async () => {
        const c = conditionOf(await policyStatus(bed.cluster), "ReplacementBlocked");
        return c?.status === "True" && c.reason === "Budget" ? c : undefined;
      },
      { timeoutMs: WAIT_MS, what: "replacement blocked on Budget" },
    );
    expect(blocked.message).toBe(
      `ConfigMap ${LEDGER} is not this policy's replacement ledger (it is not labelled healthprobe.io/ledger=policy); it is left alone, move it away; nothing is replaced until it can be read`,
    );
    const after = await bed.cluster.get("v1", "ConfigMap", LEDGER);
    expect(after!.data).toEqual(mine.data);
    expect(after!.metadata!.labels ?? {}).toEqual({});
    expect(
      requestsBy(bed.cluster.server.requestLog, { user: "operator", resource: "configmaps", verb: "update" }).filter(
        (e) => e.name === LEDGER,
      ),
    ).toEqual([]);
  }, 60_000);
});

function evictionsUid(pods: ReadonlyArray<{ metadata?: { name?: string; uid?: string } }>, name: string): string {
  return pods.find((p) => p.metadata?.name === name)!.metadata!.uid!;
}
