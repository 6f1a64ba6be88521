// spec.drain.whenAllUnhealthy FailClosed and spec.evaluation.flapQuarantine against the API test
// server, with real pod HTTP servers. Time passes by probes and status changes, never by sleeping.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { endpointReadiness, type Obj, type PolicyOptions } from "./support/cluster.js";
import { givenPolicyOver, useBed } from "./support/test-bed.js";
import { conditionOf, podEntry, policyStatus, type StatusPod } from "./support/queries.js";

const bed = useBed();

/** The policy over served pods, once every pod is Healthy and every endpoint ready. */
async function settledPolicyOver(names: string[], policy: PolicyOptions): Promise<Map<string, string>> {
  const ips = await givenPolicyOver(bed, names, policy);
  await waitForStatus(`all ${names.length} pods Healthy`, (st) => st.healthy === names.length);
  await waitFor(
    async () => [...(await endpointReadiness(bed.cluster, "web")).values()].filter(Boolean).length === names.length,
    { what: "every endpoint ready" },
  );
  return ips;
}

async function waitForStatus(
  what: string,
  predicate: (st: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const st = await policyStatus(bed.cluster);
      return st && predicate(st) ? st : undefined;
    },
    { what },
  );
}

async function eventFor(kind: string, name: string, reason: string): Promise<Obj> {
  return waitFor(
    async () =>
      (await bed.cluster.list("events.k8s.io/v1", "Event", bed.cluster.namespace)).find(
        (e) => e.reason === reason && e.regarding?.kind === kind && e.regarding?.name === name,
      ),
    {
      what: `a ${reason} Event regarding ${kind} ${name}`,
    },
  );
}

describe("whenAllUnhealthy: FailClosed", () => {
  it("drains every pod when all fail, says so in a FailClosed condition and a Warning, and keeps the cap once one recovers", async () => {
    const ips = await settledPolicyOver(["web-a", "web-b", "web-c"], {
      failureThreshold: 1,
      maxUnhealthyPercent: 34,
      drain: { whenAllUnhealthy: "FailClosed" },
    });
    expect(conditionOf(await policyStatus(bed.cluster), "FailClosed")).toMatchObject({
      status: "False",
      reason: "HealthyTargets",
    });

    for (const ip of ips.values()) bed.farm.failing(ip);
    const st = await waitForStatus("all three Unhealthy and drained", (s) => s.unhealthy === 3 && s.drained === 3);
    expect(conditionOf(st, "FailClosed")).toMatchObject({ status: "True", reason: "NoHealthyTarget" });
    expect(conditionOf(st, "FailClosed")!.message).toMatch(
      /3 Unhealthy targets drained whatever maxUnhealthyPercent says/,
    );
    expect(conditionOf(st, "FailOpen")).toBeUndefined();
    for (const p of st.pods as StatusPod[])
      expect(p.reason).toBe(
        "drained: fail closed, no healthy target (whenAllUnhealthy=FailClosed: maxUnhealthyPercent not applied)",
      );
    // The Service is dark: no endpoint is ready, although kubelet says every pod is.
    await waitFor(async () => [...(await endpointReadiness(bed.cluster, "web")).values()].every((ready) => !ready), {
      what: "no endpoint ready",
    });
    const warning = await eventFor("HealthProbePolicy", "web", "FailClosed");
    expect(warning.type).toBe("Warning");
    expect(warning.note).toMatch(/no target is both Healthy and kubelet-Ready/);

    // One recovers: the cap holds again (34% of 3 allows one drained), so one of the others returns.
    bed.farm.healthy(ips.get("web-a")!);
    const after = await waitForStatus(
      "web-a Healthy, fail-closed over",
      (s) => podEntry(s, "web-a")?.state === "Healthy" && s.drained === 1,
    );
    expect(conditionOf(after, "FailClosed")).toMatchObject({ status: "False" });
    const r = await waitFor(
      async () => {
        const x = await endpointReadiness(bed.cluster, "web");
        return [...x.values()].filter(Boolean).length === 2 ? x : undefined;
      },
      { what: "two endpoints ready" },
    );
    expect(r.get("web-a")).toBe(true);
  }, 60_000);
});

describe("flapQuarantine", () => {
  it("holds a flapping pod out of rotation for its back-off, then lets it back when Healthy", async () => {
    const ips = await settledPolicyOver(["web-a", "web-b", "web-c", "web-d"], {
      failureThreshold: 1,
      successThreshold: 1,
      evaluation: { flapQuarantine: { flaps: 2, window: "1m", maxBackoff: "6s" } },
    });
    const ip = ips.get("web-a")!;
    // Unhealthy, Healthy, Unhealthy (one flap), Healthy, Unhealthy (two flaps: quarantined).
    for (const [i, state] of (["Unhealthy", "Healthy", "Unhealthy", "Healthy", "Unhealthy"] as const).entries()) {
      if (state === "Unhealthy") bed.farm.failing(ip);
      else bed.farm.healthy(ip);
      await waitForStatus(`web-a ${state} (step ${i + 1})`, (s) => podEntry(s, "web-a")?.state === state);
    }
    bed.farm.healthy(ip);
    const held = await waitForStatus(
      "web-a Healthy but quarantined",
      (s) => podEntry(s, "web-a")?.state === "Healthy" && podEntry(s, "web-a")?.drained === true,
    );
    const entry = podEntry(held, "web-a")!;
    expect(entry.reason).toMatch(
      /^quarantined: 2 flaps in 1m, back at \S+Z \(1 of 2 allowed by maxUnhealthyPercent=50\)$/,
    );
    expect(entry.quarantinedUntil).toBeDefined();
    expect(entry.reason).toContain(`back at ${entry.quarantinedUntil}`);
    expect((await endpointReadiness(bed.cluster, "web")).get("web-a")).toBe(false);
    const onPod = await eventFor("Pod", "web-a", "Quarantined");
    expect(onPod.type).toBe("Warning");
    expect(onPod.note).toMatch(/^pod web-a quarantined: 2 flaps in 1m/);
    await eventFor("HealthProbePolicy", "web", "Quarantined");

    // After the back-off (6s: the base is maxBackoff when under 1m) it returns by itself, being Healthy.
    const back = await waitForStatus("web-a back in rotation", (s) => podEntry(s, "web-a")?.drained === false);
    expect(podEntry(back, "web-a")).toMatchObject({ state: "Healthy", reason: "admitted: healthy" });
    expect(podEntry(back, "web-a")!.quarantinedUntil).toBeUndefined();
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(entry.quarantinedUntil!));
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-a") === true, {
      what: "web-a ready again",
    });
    const restored = await eventFor("Pod", "web-a", "Restored");
    expect(restored.note).toMatch(/web-a back in rotation/);
  }, 60_000);
});
