import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, endpointReadiness, podIP, type Obj } from "./support/cluster.js";
import { givenPolicyOver, useBed } from "./support/test-bed.js";
import { podEntry, type PolicyCondition as Condition, type StatusPod } from "./support/queries.js";

const bed = useBed();

function readiness() {
  return endpointReadiness(bed.cluster, "web");
}

async function policyStatus(): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
}

function condition(status: Record<string, any> | undefined, type: string): Condition | undefined {
  return (status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
}

function readyNames(r: Map<string, boolean>): string[] {
  return [...r.entries()]
    .filter(([, ready]) => ready)
    .map(([n]) => n)
    .sort();
}

/** Every pod probed Healthy and every endpoint ready: the settled start of each scenario. */
async function allHealthyAndReady(n: number): Promise<void> {
  await waitFor(
    async () => {
      const r = await readiness();
      const st = await policyStatus();
      return st?.healthy === n && r.size === n && [...r.values()].every(Boolean);
    },
    { what: `all ${n} pods Healthy and ready` },
  );
}

async function waitForStatus(
  what: string,
  predicate: (st: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  return waitFor(
    async () => {
      const st = await policyStatus();
      return st && predicate(st) ? st : undefined;
    },
    { what },
  );
}

async function events(): Promise<Obj[]> {
  return bed.cluster.list("events.k8s.io/v1", "Event", bed.cluster.namespace);
}

/** Waits for an Event with this reason regarding the object (kind/name), optionally with a note matching. */
async function eventFor(kind: string, name: string, reason: string, note?: RegExp): Promise<Obj> {
  return waitFor(
    async () =>
      (await events()).find(
        (e) =>
          e.reason === reason &&
          e.regarding?.kind === kind &&
          e.regarding?.name === name &&
          (!note || note.test(e.note ?? "")),
      ),
    {
      what: `a ${reason} Event regarding ${kind} ${name}`,
    },
  );
}

/** Waits until the pod has answered `more` further probes, so time passes by probes, not by sleeping. */
async function probesServed(ip: string, more: number): Promise<void> {
  const start = await bed.farm.hitsOf(ip);
  await waitFor(async () => (await bed.farm.hitsOf(ip)) >= start + more, { what: `${more} more probes of ${ip}` });
}

describe("draining", () => {
  it("drains a pod after failureThreshold failures and restores it after successThreshold successes, with Events on the policy and the pod", async () => {
    const ips = await givenPolicyOver(bed, ["web-a", "web-b", "web-c", "web-d"], {
      failureThreshold: 2,
      successThreshold: 2,
    });
    await allHealthyAndReady(4);

    bed.farm.failing(ips.get("web-a")!);
    const drained = await waitFor(
      async () => {
        const r = await readiness();
        return r.get("web-a") === false ? r : undefined;
      },
      { what: "web-a drained" },
    );
    expect(readyNames(drained)).toEqual(["web-b", "web-c", "web-d"]);

    const status = await waitForStatus("status to count one drained", (st) => st.drained === 1);
    const entry = podEntry(status, "web-a");
    expect(entry).toMatchObject({ state: "Unhealthy", drained: true, lastResult: "HTTP 503" });
    expect(entry!.reason).toMatch(/drained/);
    // failureThreshold=2: at least two failing probes were answered before the drain.
    expect(await bed.farm.hitsOf(ips.get("web-a")!)).toBeGreaterThanOrEqual(2);

    const onPod = await eventFor("Pod", "web-a", "Drained");
    expect(onPod.related).toMatchObject({ kind: "HealthProbePolicy", name: "web" });
    expect(onPod.note).toMatch(/web-a drained/);
    await eventFor("HealthProbePolicy", "web", "Drained", /web-a/);

    bed.farm.healthy(ips.get("web-a")!);
    const hitsAtRecovery = await bed.farm.hitsOf(ips.get("web-a")!);
    await waitFor(async () => (await readiness()).get("web-a") === true, { what: "web-a restored" });
    // successThreshold=2: one good answer is not enough.
    expect((await bed.farm.hitsOf(ips.get("web-a")!)) - hitsAtRecovery).toBeGreaterThanOrEqual(2);
    expect(readyNames(await readiness())).toEqual(["web-a", "web-b", "web-c", "web-d"]);

    const restored = await eventFor("Pod", "web-a", "Restored");
    expect(restored.note).toMatch(/back in rotation/);
    await eventFor("HealthProbePolicy", "web", "Restored", /web-a/);
  });

  it("drains only the longest unhealthy pods up to maxUnhealthyPercent, and says why in the verdicts", async () => {
    const ips = await givenPolicyOver(bed, ["web-a", "web-b", "web-c", "web-d"], { maxUnhealthyPercent: 50 });
    await allHealthyAndReady(4);

    // One after another, so "longest unhealthy" is unambiguous: a, then b, then c.
    for (const name of ["web-a", "web-b", "web-c"]) {
      bed.farm.failing(ips.get(name)!);
      await waitForStatus(`${name} Unhealthy`, (st) => podEntry(st, name)?.state === "Unhealthy");
    }

    const st = await waitForStatus(
      "two drained and the cap reported",
      (s) => s.drained === 2 && s.unhealthy === 3 && condition(s, "DrainCapped")?.status === "True",
    );
    expect(condition(st, "DrainCapped")).toMatchObject({ reason: "MaxUnhealthyPercent" });
    expect(condition(st, "DrainCapped")!.message).toMatch(
      /1 Unhealthy target kept in rotation: maxUnhealthyPercent=50 allows 2 drained/,
    );
    expect(podEntry(st, "web-a")).toMatchObject({
      drained: true,
      reason: "drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
    });
    expect(podEntry(st, "web-b")).toMatchObject({
      drained: true,
      reason: "drained: longest unhealthy, 2 of 2 allowed by maxUnhealthyPercent=50",
    });
    expect(podEntry(st, "web-c")).toMatchObject({ drained: false, state: "Unhealthy" });
    expect(podEntry(st, "web-c")!.reason).toMatch(/^kept: over the cap, 2 of 2 allowed by maxUnhealthyPercent=50/);
    expect(podEntry(st, "web-d")).toMatchObject({ drained: false, state: "Healthy" });

    const r = await waitFor(
      async () => {
        const x = await readiness();
        return readyNames(x).join() === "web-c,web-d" ? x : undefined;
      },
      { what: "only web-c and web-d ready" },
    );
    expect(r.size).toBe(4);

    const capped = await eventFor("HealthProbePolicy", "web", "DrainCapped");
    expect(capped.type).toBe("Warning");
    expect(capped.note).toMatch(/maxUnhealthyPercent=50/);
  });

  it("fails open when every pod fails, and drains up to the cap again once one recovers", async () => {
    const ips = await givenPolicyOver(bed, ["web-a", "web-b", "web-c", "web-d"], { maxUnhealthyPercent: 50 });
    await allHealthyAndReady(4);

    for (const ip of ips.values()) bed.farm.failing(ip);
    const st = await waitForStatus(
      "all Unhealthy and fail-open",
      (s) => s.unhealthy === 4 && condition(s, "FailOpen")?.status === "True",
    );
    expect(st.drained).toBe(0);
    expect(condition(st, "FailOpen")).toMatchObject({ reason: "NoHealthyTarget" });
    for (const p of st.pods as StatusPod[])
      expect(p).toMatchObject({ drained: false, reason: "kept: fail open, no healthy target" });
    await waitFor(async () => readyNames(await readiness()).length === 4, {
      what: "every endpoint ready while failing open",
    });
    const failOpen = await eventFor("HealthProbePolicy", "web", "FailOpen");
    expect(failOpen.type).toBe("Warning");

    bed.farm.healthy(ips.get("web-a")!);
    // The recovery sweep keeps the others in rotation until each has a result newer than the
    // recovery; then two are drained and the third is over the cap.
    const after = await waitForStatus(
      "web-a Healthy, two drained and one capped",
      (s) =>
        podEntry(s, "web-a")?.state === "Healthy" && s.drained === 2 && condition(s, "DrainCapped")?.status === "True",
    );
    expect(condition(after, "FailOpen")?.status).toBe("False");
    expect((after.pods as StatusPod[]).filter((p) => /before the recovery/.test(p.reason ?? ""))).toEqual([]);
    const drainedNames = (after.pods as StatusPod[]).filter((p) => p.drained).map((p) => p.name);
    expect(drainedNames).toHaveLength(2);
    expect(drainedNames).not.toContain("web-a");

    const r = await waitFor(
      async () => {
        const x = await readiness();
        return readyNames(x).length === 2 ? x : undefined;
      },
      { what: "two endpoints ready" },
    );
    expect(r.get("web-a")).toBe(true);
    for (const name of drainedNames) expect(r.get(name)).toBe(false);
  });

  it("never drains the only pod of a Service, however long it fails", async () => {
    const ips = await givenPolicyOver(bed, ["web-a"], { failureThreshold: 1 });
    await allHealthyAndReady(1);
    const ip = ips.get("web-a")!;

    bed.farm.failing(ip);
    const st = await waitForStatus(
      "web-a Unhealthy and fail-open",
      (s) => podEntry(s, "web-a")?.state === "Unhealthy" && condition(s, "FailOpen")?.status === "True",
    );
    expect(st.drained).toBe(0);

    // Keep failing for many more periods; the endpoint must stay ready every time we look.
    for (let i = 0; i < 6; i++) {
      await probesServed(ip, 1);
      expect((await readiness()).get("web-a")).toBe(true);
    }
    const writes = bed.cluster.server.requestLog.filter(
      (e) => e.user === "operator" && e.resource === "endpointslices" && e.method !== "GET",
    );
    // One create when the policy settled; failing never rewrote the slice.
    expect(writes.map((e) => e.verb)).toEqual(["create"]);
    expect((await events()).some((e) => e.reason === "Drained")).toBe(false);
  });

  it("keeps a pod added to a settled policy out of rotation until its first successful probe", async () => {
    await givenPolicyOver(bed, ["web-a", "web-b"], { failureThreshold: 100 });
    await allHealthyAndReady(2);

    await bed.cluster.create(aPod("web-c", bed.cluster.namespace));
    const ip = await podIP(bed.cluster, "web-c");
    bed.farm.failing(ip);
    await bed.farm.serve(ip);

    // Listed, not ready, Unknown — and still so after several failing probes.
    await waitFor(async () => (await readiness()).get("web-c") === false, { what: "web-c listed but not ready" });
    await probesServed(ip, 3);
    expect((await readiness()).get("web-c")).toBe(false);
    const st = await policyStatus();
    expect(podEntry(st, "web-c")).toMatchObject({
      state: "Unknown",
      drained: false,
      reason: "not admitted: unknown, waiting for first success",
    });
    expect(readyNames(await readiness())).toEqual(["web-a", "web-b"]);

    bed.farm.healthy(ip);
    await waitFor(async () => (await readiness()).get("web-c") === true, {
      what: "web-c ready after its first success",
    });
    const healthy = await waitForStatus("web-c Healthy", (s) => podEntry(s, "web-c")?.state === "Healthy");
    expect(podEntry(healthy, "web-c")!.reason).toBe("admitted: healthy");
  });
});
