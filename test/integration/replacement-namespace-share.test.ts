// The per-namespace share of the operator-wide cap end to end: a tenant that has spent its share
// waits (ReplacementBlocked names the share), and a due replacement in another namespace still
// goes through. The ReplicaSet controller recreates what is evicted; an offset clock passes the
// replacement windows.
import { beforeEach, describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, type Obj } from "./support/cluster.js";
import * as queries from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const HPP = "healthprobe.io/v1alpha1";
const AFTER_MS = 30_000;
/** Generous deadlines: the suite shares two cores with everything else. */
const WAIT_MS = 20_000;
const OTHER = "tenant-two";

const bed = useBed();

beforeEach(async () => {
  await bed.cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: OTHER } });
});

const nameOf = (p: Obj): string => p.metadata!.name!;

/** Three pods and a policy replacing after 30 s with room of its own; the breaker is off (pauseAbove 100). */
async function givenApp(namespace: string): Promise<Obj[]> {
  await bed.cluster.create(aService("web", namespace));
  await bed.cluster.create(aReplicaSet("web", namespace, 3));
  const pods = await queries.livePods(bed, 3, { namespace, timeoutMs: WAIT_MS });
  await bed.cluster.create(
    aPolicy("web", namespace, {
      replacement: { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 5, pauseAboveUnhealthyPercent: 100 },
    }),
  );
  return pods;
}

const statusIn = async (namespace: string) =>
  (await bed.cluster.get(HPP, "HealthProbePolicy", "web", namespace))?.status;

async function allUnhealthy(namespace: string, pods: Obj[]): Promise<void> {
  await waitFor(
    async () => {
      const seen = (await statusIn(namespace))?.pods ?? [];
      return pods.every((p) =>
        seen.some(
          (s: { name: string; state: string; replaceAfter?: string }) =>
            s.name === nameOf(p) && s.state === "Unhealthy" && s.replaceAfter,
        ),
      );
    },
    { timeoutMs: WAIT_MS, what: `${pods.map(nameOf).join(", ")} Unhealthy in ${namespace}` },
  );
}

const evicted = (namespace: string) =>
  queries.evictionsOf(bed.cluster, { code: 201 }).filter((e) => e.namespace === namespace);

describe("the per-namespace share of the operator-wide cap", () => {
  it("a namespace that spent its share waits on Budget naming the share, and a due pod in another namespace is still replaced", async () => {
    const own = bed.cluster.namespace;
    const mine = await givenApp(own);
    const theirs = await givenApp(OTHER);
    await bed.startOperator(["--max-replacements-per-12h", "4", "--max-replacements-per-12h-per-namespace", "1"], {
      clock: bed.clock,
    });
    await waitFor(async () => (await statusIn(own))?.healthy === 3 && (await statusIn(OTHER))?.healthy === 3, {
      timeoutMs: WAIT_MS,
      what: "all pods Healthy",
    });

    // Two due pods in the first namespace: its share of 1 lets one go.
    for (const p of mine.slice(0, 2)) bed.farm.failing(p.status.podIP);
    await allUnhealthy(own, mine.slice(0, 2));
    bed.clock.advance(AFTER_MS);
    await waitFor(() => evicted(own).length === 1, { timeoutMs: WAIT_MS, what: `one eviction in ${own}` });
    const blocked = await waitFor(
      async () => {
        const c = queries.conditionOf(await statusIn(own), "ReplacementBlocked");
        return c?.status === "True" && c.reason === "Budget" ? c : undefined;
      },
      { timeoutMs: WAIT_MS, what: `ReplacementBlocked=True reason Budget in ${own}` },
    );
    expect(blocked.message).toContain(
      `namespace ${own} used its 1 of the operator-wide 4 replacements per 12h (--max-replacements-per-12h-per-namespace=1)`,
    );

    // The operator-wide cap has room (1 of 4): the other namespace's due pod is replaced.
    const victim = theirs[0]!;
    bed.farm.failing(victim.status.podIP);
    await allUnhealthy(OTHER, [victim]);
    bed.clock.advance(AFTER_MS);
    await waitFor(() => evicted(OTHER).length === 1, { timeoutMs: WAIT_MS, what: `the eviction in ${OTHER}` });
    expect(evicted(OTHER)[0]!.name).toBe(nameOf(victim));

    // Each charge names its namespace; the first namespace's second pod is still waiting.
    const ledger = await waitFor(
      async () => {
        const l = await queries.operatorLedger(bed.cluster);
        return l.length === 2 ? l : undefined;
      },
      { timeoutMs: WAIT_MS, what: "two charges in the operator-wide ledger" },
    );
    expect(ledger.map((e) => e.namespace).sort()).toEqual([own, OTHER].sort());
    expect(evicted(own)).toHaveLength(1);
  });
});
