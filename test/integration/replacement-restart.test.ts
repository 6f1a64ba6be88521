// The replacement window survives a restart: `unhealthySince` is persisted in status and a new
// operator takes it from there, so the pod is replaced at the original unhealthySince + after.
// Both operators share one offset clock, so the window passes on demand.
import { describe, expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { livePods } from "./support/queries.js";

const HPP = "healthprobe.io/v1alpha1";
const AFTER_MS = 30_000;
/** Generous deadlines: the suite shares two cores with everything else. */
const WAIT_MS = 20_000;

const bed = useBed();

async function statusOf(): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get(HPP, "HealthProbePolicy", "web"))?.status;
}

function evictions() {
  return requestsBy(bed.cluster.server.requestLog, { user: "operator", resource: "pods", subresource: "eviction" });
}

describe("replacement across a restart", () => {
  it("keeps unhealthySince from status, so the pod is replaced at the original unhealthySince + after, not later", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aReplicaSet("web", bed.cluster.namespace, 2));
    const [victim] = await livePods(bed, 2, { timeoutMs: WAIT_MS });
    const uid = victim!.metadata!.uid!;
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        replacement: { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 3 },
      }),
    );
    const first = await bed.startOperator([], { clock: bed.clock });
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: WAIT_MS, what: "both pods Healthy" });

    bed.farm.failing(victim!.status.podIP);
    const entry = await waitFor(
      async () =>
        (await statusOf())?.pods?.find(
          (p: { uid: string; state: string; replaceAfter?: string }) =>
            p.uid === uid && p.state === "Unhealthy" && p.replaceAfter,
        ),
      {
        timeoutMs: WAIT_MS,
        what: "the pod Unhealthy in status",
      },
    );
    const since = Date.parse(entry.unhealthySince);
    expect(Date.parse(entry.replaceAfter)).toBe(since + AFTER_MS);

    // A third of the window passes, then the operator is replaced by a new one.
    bed.clock.advance(AFTER_MS / 3);
    await bed.stopOperator(first);
    const second = await bed.startOperator([], { clock: bed.clock });

    // The new operator's view: still Unhealthy, since the persisted instant.
    const restored = await waitFor(
      () => {
        const h = second.health.get("shop/web", uid);
        return h?.state === "Unhealthy" ? h : undefined;
      },
      { timeoutMs: WAIT_MS, what: "the new operator to see the pod Unhealthy" },
    );
    expect(restored.unhealthySince).toBe(since);
    const st = await statusOf();
    const kept = st?.pods?.find((p: { uid: string }) => p.uid === uid);
    expect(kept).toMatchObject({ unhealthySince: entry.unhealthySince, replaceAfter: entry.replaceAfter });
    expect(evictions()).toHaveLength(0);

    // Just past the original window end, and no further: the pod is replaced.
    bed.clock.advance(Math.max(0, since + AFTER_MS + 500 - bed.clock.now()));
    await waitFor(async () => !(await bed.cluster.get("v1", "Pod", victim!.metadata!.name!)), {
      timeoutMs: WAIT_MS,
      what: "the pod to be evicted",
    });
    const ledger = await waitFor(
      async () => (await statusOf())?.replacements?.find((r: { uid: string }) => r.uid === uid),
      { timeoutMs: WAIT_MS, what: "the charge in status" },
    );
    const chargedAfter = Date.parse(ledger.time) - since;
    expect(chargedAfter).toBeGreaterThanOrEqual(AFTER_MS);
    // A window restarted by the new operator would have ended 10 s later than this.
    expect(chargedAfter).toBeLessThan(AFTER_MS + AFTER_MS / 3);
    expect(evictions().map((e) => [e.name, e.code])).toEqual([[victim!.metadata!.name, 201]]);
  });
});
