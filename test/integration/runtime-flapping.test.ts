// A pod flapping 100 times in a minute costs a bounded number of API writes: status at most
// once per second per policy, Events aggregated into series under a per-object token bucket.
// Operator time runs four times faster than real time (a scaled clock), so the minute is the
// operator's minute: probe periods, status spacing, the Event buckets and heartbeats all see it.
import { describe, expect, it } from "@jest/globals";
import { ScaledClock } from "../../operator/src/runtime/testing/scaled-clock.js";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { servedPods } from "./support/queries.js";

const RATE = 4;
const TOGGLES = 100;
/** Toggles driven by probes: each probe sees the opposite of the one before, a real health flip. */
const PROBE_DRIVEN = 40;
const MINUTE_MS = 60_000;
/** Status: writes at least a second apart (floor(W/1 s) + 1 fit in W), plus one already in flight as the window opens. */
const statusBound = (windowMs: number) => Math.floor(windowMs / 1000) + 2;
/** Events: new Events are capped by the per-object token bucket's burst (25, refilled one per 5 min)... */
const EVENT_CREATE_BOUND = 25;
/** ...and repeats only bump a series count, written at most once per series per 30 s heartbeat. */
const HEARTBEAT_MS = 30_000;
const eventPatchBound = (series: number, windowMs: number) => series * Math.ceil(windowMs / HEARTBEAT_MS);

const bed = useBed({ per: "file" });

describe("a flapping pod", () => {
  it("costs at most one status write per second and a bounded number of Event writes", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, ["web-a", "web-b", "web-c", "web-d"]);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        periodSeconds: 1,
        failureThreshold: 1,
        successThreshold: 1,
        maxUnhealthyPercent: 50,
      }),
    );
    const clock = new ScaledClock(RATE);
    await bed.startOperator([], { clock });
    await waitFor(
      async () => {
        const r = await endpointReadiness(bed.cluster, "web");
        return r.size === 4 && [...r.values()].every(Boolean);
      },
      { what: "all four pods ready" },
    );

    const ip = ips.get("web-a")!;
    const log = () => bed.cluster.server.requestLog;
    const from = log().length;
    const v0 = clock.now();
    let healthy = true;
    const toggle = () => {
      healthy = !healthy;
      if (healthy) bed.farm.healthy(ip);
      else bed.farm.failing(ip);
    };

    // Forty toggles right after a probe, so the next probe flips the pod's health...
    for (let i = 0; i < PROBE_DRIVEN; i++) {
      const seen = await bed.farm.hitsOf(ip);
      await waitFor(async () => (await bed.farm.hitsOf(ip)) > seen, { intervalMs: 2, what: `probe ${i} of web-a` });
      toggle();
    }
    // ...then the rest evenly over what remains of the minute, faster than the probe period.
    const rest = TOGGLES - PROBE_DRIVEN;
    const start = clock.now();
    const step = Math.max(100, (v0 + MINUTE_MS - start) / rest);
    for (let i = 1; i <= rest; i++) {
      await waitFor(() => clock.now() >= start + i * step, { intervalMs: 2, what: `toggle ${PROBE_DRIVEN + i}` });
      toggle();
    }
    expect(healthy).toBe(true);
    const vEnd = clock.now();
    const minuteEnd = log().length;

    await waitFor(
      async () => {
        const st = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
        return (
          st?.healthy === 4 && st.drained === 0 && (await endpointReadiness(bed.cluster, "web")).get("web-a") === true
        );
      },
      { what: "web-a back in rotation" },
    );
    // Let the Event heartbeat that follows the last flip (30 s of operator time) write its series counts.
    await waitFor(() => clock.now() >= vEnd + 31_000, { timeoutMs: 15_000, what: "one Event heartbeat" });
    const windowMs = clock.now() - v0;

    const writes = requestsBy(log().slice(from), { user: "operator", writes: true });
    const isStatus = (e: { resource: string; subresource: string }) =>
      e.resource === "healthprobepolicies" && e.subresource === "status";
    const statusWrites = requestsBy(log().slice(from, minuteEnd), { user: "operator", writes: true }).filter(
      isStatus,
    ).length;
    const statusWritesAfter = writes.filter(isStatus).length - statusWrites;
    const sliceWrites = writes.filter((e) => e.resource === "endpointslices").length;
    const eventCreates = writes.filter((e) => e.resource === "events" && e.verb === "create").length;
    const eventPatches = writes.filter((e) => e.resource === "events" && e.verb === "patch").length;
    const events = await bed.cluster.list("events.k8s.io/v1", "Event");
    const occurrences = events.reduce((n, e) => n + (e.series?.count ?? 1), 0);
    console.log(
      `flapping over ${Math.round((vEnd - v0) / 1000)} s of operator time (${Math.round(windowMs / 1000)} s with settling): ` +
        `${sliceWrites} slice writes, ${statusWrites} status writes (${statusWritesAfter} more while settling), ${eventCreates} Event creates, ${eventPatches} Event patches; ` +
        `${events.length} Events recording ${occurrences} occurrences`,
    );

    // The pod really flapped: the slice followed it many times.
    expect(sliceWrites).toBeGreaterThanOrEqual(PROBE_DRIVEN / 2);
    expect(statusWrites).toBeGreaterThan(0);
    expect(statusWrites).toBeLessThanOrEqual(statusBound(vEnd - v0));
    expect(statusWritesAfter).toBeLessThanOrEqual(2);
    expect(eventCreates).toBeLessThanOrEqual(EVENT_CREATE_BOUND);
    expect(eventPatches).toBeLessThanOrEqual(eventPatchBound(events.length, windowMs));
    expect(eventCreates + eventPatches).toBeLessThanOrEqual(EVENT_CREATE_BOUND + 15);
    // Aggregation lost nothing it reported: series counts cover more occurrences than Event writes.
    expect(occurrences).toBeGreaterThan(eventCreates);
  }, 90_000);
});
