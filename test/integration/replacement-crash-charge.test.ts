// Crash safety of a replacement, part 1: the operator process dies (SIGKILL) right after it
// has charged and persisted the ledgers, before the eviction. Run as a child process, exactly
// as deployed, with `after: 30s` in real time.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { AFTER_MS, useCrashScenario } from "./support/crash-scenario.js";

const scenario = useCrashScenario();

describe("replacement crash safety", () => {
  it("killed after the charge, before the eviction: after a restart the pod is evicted at once, charged once, and the budget holds", async () => {
    const s = scenario();
    const { pods, unhealthySince } = await s.untilCrash("after-charge");
    expect(s.evictions()).toHaveLength(0);
    // The charge is in the policy's ledger ConfigMap; the status write after it never happened.
    const charged = await s.policyLedgerUids();
    expect(charged).toHaveLength(1);
    const victimUid = charged[0]!;
    const victim = pods.find((p) => p.metadata!.uid === victimUid)!;
    const other = pods.find((p) => p !== victim)!;
    expect(await s.operatorLedgerUids()).toEqual([victimUid]);

    const restartedAt = Date.now();
    s.operator();
    await waitFor(async () => !(await s.cluster.get("v1", "Pod", victim.metadata!.name!)), {
      timeoutMs: 20_000,
      what: "the charged pod to be evicted",
    });
    const [eviction] = s.evictions(201);
    expect(eviction?.name).toBe(victim.metadata!.name);
    // Evicted well before a fresh 30 s window could have ended: the window was not restarted.
    expect(Date.parse(eviction!.time) - restartedAt).toBeLessThan(AFTER_MS);

    await s.expectOtherBlockedOnBudget(other, victimUid, unhealthySince);
  }, 120_000);
});
