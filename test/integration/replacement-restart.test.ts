// The replacement window survives a restart: `unhealthySince` is persisted in status and a new
// operator takes it from there, so the pod is replaced at the original unhealthySince + after.
// Both operators share one offset clock, so the window passes on demand.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { OffsetClock } from "../../operator/src/runtime/testing/offset-clock.js";
import { requestsBy } from "../apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, type Obj, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

const HPP = "healthprobe.io/v1alpha1";
const AFTER_MS = 30_000;
/** Generous deadlines: the suite shares two cores with everything else. */
const WAIT_MS = 20_000;

let cluster: TestCluster;
let farm: PodFarm;
let clock: OffsetClock;
let operators: TestOperator[] = [];

beforeEach(async () => {
  ({ cluster, farm } = await openBed());
  clock = new OffsetClock();
});

afterEach(async () => {
  await closeBed({ cluster, farm }, operators);
  operators = [];
});

async function livePods(n: number): Promise<Obj[]> {
  const pods = await waitFor(async () => {
    const list = (await cluster.list("v1", "Pod", cluster.namespace, "app=web")).filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP);
    return list.length === n ? list : undefined;
  }, { timeoutMs: WAIT_MS, what: `${n} running pods` });
  for (const p of pods) await farm.serve(p.status.podIP);
  return pods;
}

async function statusOf(): Promise<Record<string, any> | undefined> {
  return (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status;
}

function evictions() {
  return requestsBy(cluster.server.requestLog, { user: "operator", resource: "pods", subresource: "eviction" });
}

async function start(): Promise<TestOperator> {
  const op = await startTestOperator(cluster.server, [], { clock });
  operators.push(op);
  return op;
}

describe("replacement across a restart", () => {
  it("keeps unhealthySince from status, so the pod is replaced at the original unhealthySince + after, not later", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aReplicaSet("web", cluster.namespace, 2));
    const [victim] = await livePods(2);
    const uid = victim!.metadata!.uid!;
    await cluster.create(aPolicy("web", cluster.namespace, { replacement: { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 3 } }));
    const first = await start();
    await waitFor(async () => (await statusOf())?.healthy === 2, { timeoutMs: WAIT_MS, what: "both pods Healthy" });

    farm.failing(victim!.status.podIP);
    const entry = await waitFor(async () => (await statusOf())?.pods?.find((p: { uid: string; state: string; replaceAfter?: string }) => p.uid === uid && p.state === "Unhealthy" && p.replaceAfter), {
      timeoutMs: WAIT_MS,
      what: "the pod Unhealthy in status",
    });
    const since = Date.parse(entry.unhealthySince);
    expect(Date.parse(entry.replaceAfter)).toBe(since + AFTER_MS);

    // A third of the window passes, then the operator is replaced by a new one.
    clock.advance(AFTER_MS / 3);
    await first.stop();
    operators = operators.filter((op) => op !== first);
    const second = await start();

    // The new operator's view: still Unhealthy, since the persisted instant.
    const restored = await waitFor(() => {
      const h = second.health.get("shop/web", uid);
      return h?.state === "Unhealthy" ? h : undefined;
    }, { timeoutMs: WAIT_MS, what: "the new operator to see the pod Unhealthy" });
    expect(restored.unhealthySince).toBe(since);
    const st = await statusOf();
    const kept = st?.pods?.find((p: { uid: string }) => p.uid === uid);
    expect(kept).toMatchObject({ unhealthySince: entry.unhealthySince, replaceAfter: entry.replaceAfter });
    expect(evictions()).toHaveLength(0);

    // Just past the original window end, and no further: the pod is replaced.
    clock.advance(Math.max(0, since + AFTER_MS + 500 - clock.now()));
    await waitFor(async () => !(await cluster.get("v1", "Pod", victim!.metadata!.name!)), { timeoutMs: WAIT_MS, what: "the pod to be evicted" });
    const ledger = await waitFor(async () => (await statusOf())?.replacements?.find((r: { uid: string }) => r.uid === uid), { timeoutMs: WAIT_MS, what: "the charge in status" });
    const chargedAfter = Date.parse(ledger.time) - since;
    expect(chargedAfter).toBeGreaterThanOrEqual(AFTER_MS);
    // A window restarted by the new operator would have ended 10 s later than this.
    expect(chargedAfter).toBeLessThan(AFTER_MS + AFTER_MS / 3);
    expect(evictions().map((e) => [e.name, e.code])).toEqual([[victim!.metadata!.name, 201]]);
  });
});
