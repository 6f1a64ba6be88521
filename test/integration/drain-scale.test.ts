// A Service of 250 pods: three slices of at most 100 endpoints, and one pod's drain rewrites
// exactly the one slice that lists it, once.
import { beforeAll, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, uniquePodCidr, type Obj } from "./support/cluster.js";
import { describeOnTestServer, useBed } from "./support/test-bed.js";

const PODS = 250;

// A /23 per process: room for every pod, and no address shared with suites running alongside.
const bed = useBed({ per: "file", podCidr: uniquePodCidr(23) });
const ips = new Map<string, string>();

beforeAll(async () => {
  await bed.cluster.create(aService("web", bed.cluster.namespace));
  const names = Array.from({ length: PODS }, (_, i) => `web-${String(i).padStart(3, "0")}`);
  for (let i = 0; i < names.length; i += 25)
    await Promise.all(names.slice(i, i + 25).map((n) => bed.cluster.create(aPod(n, bed.cluster.namespace))));
  const pods = await waitFor(
    async () => {
      const list = await bed.cluster.list("v1", "Pod");
      return list.length === PODS && list.every((p) => p.status?.podIP) ? list : undefined;
    },
    { what: `${PODS} pods with IPs`, timeoutMs: 30_000 },
  );
  for (const p of pods) {
    ips.set(p.metadata!.name!, p.status.podIP as string);
    await bed.farm.serve(p.status.podIP as string);
  }
  await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { failureThreshold: 2, successThreshold: 1 }));
  await bed.startOperator();
}, 60_000);

const slices = () =>
  bed.cluster.list("discovery.k8s.io/v1", "EndpointSlice", bed.cluster.namespace, "kubernetes.io/service-name=web");
const sliceWrites = () =>
  bed.cluster.server.requestLog.filter(
    (e) => e.user === "operator" && e.resource === "endpointslices" && e.method !== "GET",
  );
const readyIn = (s: Obj) => (s.endpoints ?? []).filter((e: Obj) => e.conditions?.ready === true).length;
const nameOf = (s: Obj) => s.metadata?.name;
const sliceOf = (all: Obj[], pod: string) =>
  all.find((s) => (s.endpoints ?? []).some((e: Obj) => e.targetRef?.name === pod));

async function settled(expectReady: number): Promise<Obj[]> {
  return waitFor(
    async () => {
      const st = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
      const all = await slices();
      const ready = all.reduce((n, s) => n + readyIn(s), 0);
      return st?.healthy + st?.unhealthy === PODS && ready === expectReady ? all : undefined;
    },
    { what: `${expectReady} of ${PODS} endpoints ready`, timeoutMs: 30_000 },
  );
}

// Test server only: the control plane's pod range holds 126 addresses.
describeOnTestServer("a Service with 250 pods", () => {
  it("is written as three slices of at most 100 endpoints", async () => {
    const all = await settled(PODS);
    expect(all).toHaveLength(3);
    expect(all.map((s) => s.endpoints.length).sort((a, b) => a - b)).toEqual([50, 100, 100]);
    const listed = new Set(all.flatMap((s) => s.endpoints.map((e: Obj) => e.targetRef.name)));
    expect(listed.size).toBe(PODS);
    // Pods turned Healthy in quick succession while settling: no write raced the operator's own previous one.
    expect(sliceWrites().filter((w) => w.code === 409)).toEqual([]);
  });

  it("rewrites exactly one slice, once, when one pod is drained and once when it is restored", async () => {
    const before = await settled(PODS);
    const pod = "web-123";
    const home = nameOf(sliceOf(before, pod)!);
    const writesBefore = sliceWrites().length;

    bed.farm.failing(ips.get(pod)!);
    const drained = await waitFor(
      async () => {
        const all = await slices();
        const e = sliceOf(all, pod)?.endpoints.find((x: Obj) => x.targetRef?.name === pod);
        return e?.conditions?.ready === false ? all : undefined;
      },
      { what: `${pod} drained` },
    );
    // Let a couple more failing probes pass: still nothing more is written.
    const start = await bed.farm.hitsOf(ips.get(pod)!);
    await waitFor(async () => (await bed.farm.hitsOf(ips.get(pod)!)) >= start + 2, { what: "two more probes" });
    const drainWrites = sliceWrites().slice(writesBefore);
    expect(drainWrites.map((w) => `${w.verb} ${w.name}`)).toEqual([`update ${home}`]);
    const after = await slices();
    for (const s of after) {
      const old = before.find((b) => nameOf(b) === nameOf(s))!;
      expect(s.metadata?.resourceVersion === old.metadata?.resourceVersion).toBe(nameOf(s) !== home);
    }
    expect(drained.reduce((n, s) => n + readyIn(s), 0)).toBe(PODS - 1);

    const writesDrained = sliceWrites().length;
    bed.farm.healthy(ips.get(pod)!);
    await settled(PODS);
    const restoreWrites = sliceWrites().slice(writesDrained);
    expect(restoreWrites.map((w) => `${w.verb} ${w.name}`)).toEqual([`update ${home}`]);
  });
});
