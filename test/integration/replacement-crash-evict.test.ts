// Crash safety of a replacement, part 2: the operator process dies (SIGKILL) right after the
// eviction, before it writes the outcome to status. Run as a child process, exactly as
// deployed, with `after: 30s` in real time.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { useCrashScenario } from "./support/crash-scenario.js";
import { conditionOf } from "./support/queries.js";

const scenario = useCrashScenario();

describe("replacement crash safety", () => {
  it("killed after the eviction, before its status write: after a restart nothing more is evicted and both ledgers hold the one replacement", async () => {
    const s = scenario();
    const { pods, unhealthySince } = await s.untilCrash("after-evict");
    const [eviction] = s.evictions();
    expect(s.evictions().map((e) => e.code)).toEqual([201]);
    const victim = pods.find((p) => p.metadata!.name === eviction!.name)!;
    const other = pods.find((p) => p !== victim)!;
    const victimUid = victim.metadata!.uid!;
    // The charge was persisted (in the policy's ledger ConfigMap) before the eviction; the status write after it never happened.
    expect(await s.policyLedgerUids()).toEqual([victimUid]);
    const charged = await s.status();
    expect(charged?.replacements ?? []).toEqual([]);
    expect(conditionOf(charged, "ReplacementBlocked")?.status).not.toBe("True");
    expect(await s.operatorLedgerUids()).toEqual([victimUid]);

    s.operator();
    // The restarted operator sees the other pod due and holds it back: the budget is spent.
    const after = await s.expectOtherBlockedOnBudget(other, victimUid, unhealthySince);
    expect(after.conditions.find((c: { type: string }) => c.type === "ReplacementBlocked").message).toContain(
      `${other.metadata!.name}: hourly budget`,
    );
    await waitFor(async () => !(await s.cluster.get("v1", "Pod", victim.metadata!.name!)), {
      timeoutMs: 20_000,
      what: "the evicted pod to be gone",
    });
  }, 120_000);
});
