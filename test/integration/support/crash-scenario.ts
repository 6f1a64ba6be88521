// The shared half of the crash-safety scenarios: a cluster, two ReplicaSet pods that fail
// together with a budget of one, and an operator process that dies at a failpoint. Each test
// file then checks what a restarted operator does after its own kind of crash.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "@jest/globals";
import { startOperatorProcess, type OperatorProcess } from "../../support/operator-process.js";
import { waitFor } from "../../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, startCluster, type Obj, type TestCluster } from "./cluster.js";
import type { Farm } from "../../support/pod-farm.js";
import { conditionOf, evictionsOf, livePods, operatorLedger, policyLedger, policyStatus } from "./queries.js";

export const AFTER_MS = 30_000;

/** Starts a fresh scenario before each test and stops it after; the function returns the current one. */
export function useCrashScenario(): () => CrashScenario {
  let current: CrashScenario | undefined;
  beforeEach(async () => {
    current = await CrashScenario.start();
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("the crash scenario is used outside a test, or its set-up failed");
    return current;
  };
}

export class CrashScenario {
  private readonly children: OperatorProcess[] = [];
  private constructor(
    readonly cluster: TestCluster,
    readonly farm: Farm,
    private readonly dir: string,
  ) {}

  static async start(): Promise<CrashScenario> {
    const cluster = await startCluster();
    return new CrashScenario(cluster, cluster.newFarm(), mkdtempSync(join(tmpdir(), "hpp-crash-")));
  }

  async stop(): Promise<void> {
    for (const c of this.children) await c.stop();
    if (process.env.DUMP_LOGS) for (const c of this.children) console.log(c.output.slice(-60).join(""));
    await this.farm.close();
    await this.cluster.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  operator(failpoint?: "after-charge" | "after-evict"): OperatorProcess {
    const proc = startOperatorProcess({
      server: this.cluster.server,
      dir: this.dir,
      ...(failpoint ? { failpoint } : {}),
    });
    this.children.push(proc);
    return proc;
  }

  status(): Promise<Record<string, any> | undefined> {
    return policyStatus(this.cluster);
  }

  evictions(code?: number) {
    return evictionsOf(this.cluster, code === undefined ? {} : { code });
  }

  /** The policy's ledger (its ConfigMap), by pod uid. */
  async policyLedgerUids(): Promise<string[]> {
    return (await policyLedger(this.cluster)).map((e) => e.uid!);
  }

  async operatorLedgerUids(): Promise<string[]> {
    return (await operatorLedger(this.cluster)).map((e) => e.uid!);
  }

  /**
   * Three pods of a ReplicaSet, a policy with `after: 30s` and a budget of one, an operator that
   * dies at `failpoint` once two of three pods fail. Returns those two and each one's unhealthySince.
   */
  async untilCrash(
    failpoint: "after-charge" | "after-evict",
  ): Promise<{ pods: Obj[]; unhealthySince: Map<string, string> }> {
    const { cluster, farm } = this;
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aReplicaSet("web", cluster.namespace, 3));
    // The third pod stays Healthy: with none Healthy the policy would fail open and replace nothing.
    const pods = (await livePods(this, 3)).slice(0, 2);
    // Two of three fail: above the mass-failure breaker's default of 50%, so it is off here.
    await cluster.create(
      aPolicy("web", cluster.namespace, {
        replacement: { enabled: true, after: "30s", maxPerHour: 1, maxPerDay: 1, pauseAboveUnhealthyPercent: 100 },
      }),
    );
    const first = this.operator(failpoint);
    await waitFor(async () => (await this.status())?.healthy === 3, { timeoutMs: 20_000, what: "all pods Healthy" });

    // Two fail: both come due together, and the budget has room for one.
    for (const p of pods) farm.failing(p.status.podIP);
    const before = await waitFor(
      async () => {
        const st = await this.status();
        return st?.pods?.filter(
          (p: { state: string; replaceAfter?: string }) => p.state === "Unhealthy" && p.replaceAfter,
        ).length === 2
          ? st
          : undefined;
      },
      { what: "both pods Unhealthy in status" },
    );
    const unhealthySince = new Map<string, string>(
      before.pods.map((p: { uid: string; unhealthySince: string }) => [p.uid, p.unhealthySince]),
    );
    expect(
      await waitFor(() => first.exited, { timeoutMs: AFTER_MS + 20_000, what: "the failpoint to kill the operator" }),
    ).toEqual({ code: null, signal: "SIGKILL" });
    return { pods, unhealthySince };
  }

  /** After a restart: the other pod is held back by the spent budget, its window kept from status. */
  async expectOtherBlockedOnBudget(
    other: Obj,
    victimUid: string,
    unhealthySince: Map<string, string>,
  ): Promise<Record<string, any>> {
    const after = await waitFor(
      async () => {
        const st = await this.status();
        const c = conditionOf(st, "ReplacementBlocked");
        return c?.status === "True" && c.reason === "Budget" ? st : undefined;
      },
      { timeoutMs: 20_000, what: "the other pod blocked on Budget" },
    );
    expect(after.pods.find((p: { uid: string }) => p.uid === other.metadata!.uid)?.unhealthySince).toBe(
      unhealthySince.get(other.metadata!.uid!),
    );
    // status.replacements mirrors the ledger ConfigMap.
    expect(after.replacements.map((r: { uid: string }) => r.uid)).toEqual([victimUid]);
    expect(await this.policyLedgerUids()).toEqual([victimUid]);
    expect(after.replacedInLastDay).toBe(1);
    expect(await this.operatorLedgerUids()).toEqual([victimUid]);
    expect(this.evictions()).toHaveLength(1);
    expect(await this.cluster.get("v1", "Pod", other.metadata!.name!)).toBeDefined();
    return after;
  }
}
