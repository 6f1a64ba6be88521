import { describe, expect, it } from "@jest/globals";
import {
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_OPERATOR,
  type EndpointSliceObject,
} from "../domain/endpoint-slice-types.js";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import { Endpoints, rotationOf } from "./endpoints.js";
import type { KubeObject } from "./kube-objects.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { MemoryWriter } from "./testing/memory-writer.js";
import { NS, aPodObject, aServiceObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const LABELS = { [LABEL_MANAGED_BY]: MANAGED_BY_OPERATOR, [LABEL_SERVICE_NAME]: "web" };

/** A slice we wrote earlier, for an old port (9090): any plan for the current Service replaces it. */
function anOldSlice(name: string, pods: Array<{ name: string; ready: boolean }>): EndpointSliceObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace: NS, labels: { ...LABELS }, ownerReferences: [], resourceVersion: "5" },
    addressType: "IPv4",
    ports: [{ name: "old", port: 9090, protocol: "TCP" }],
    endpoints: pods.map((p) => ({
      addresses: ["10.0.0.9"],
      conditions: { ready: p.ready, serving: true, terminating: false },
      targetRef: { kind: "Pod", namespace: NS, name: p.name, uid: `uid-${p.name}` },
    })),
  } as EndpointSliceObject;
}

function anEndpoints(existing: EndpointSliceObject[] = []) {
  const slices = new MemoryCache<KubeObject>(existing as unknown as KubeObject[]);
  const writer = new MemoryWriter();
  for (const s of existing) writer.slices.set(s.metadata.name!, s as never);
  const clock = new FakeClock();
  return { endpoints: new Endpoints({ slices, nodes: new MemoryCache(), writer, clock }), writer, slices, clock };
}

describe("the endpoints part", () => {
  it("creates the replacement slice before it deletes the old one", async () => {
    const old = anOldSlice("web-old", [{ name: "web-a", ready: true }]);
    const { endpoints, writer } = anEndpoints([old]);
    await endpoints.apply(quietLogger(), {
      service: aServiceObject(),
      pods: [aPodObject("web-a")],
      admitted: () => true,
      existing: [old],
    });
    expect(writer.calls.map((c) => c.split(" ")[0])).toEqual(["create", "delete"]);
    expect(writer.calls[1]).toBe("delete web-old");
  });

  it("leaves the old slice in place when the create fails, so the Service never has no endpoints", async () => {
    const old = anOldSlice("web-old", [{ name: "web-a", ready: true }]);
    const { endpoints, writer } = anEndpoints([old]);
    writer.failNext = { prefix: "create", error: new Error("create refused") };
    await expect(
      endpoints.apply(quietLogger(), {
        service: aServiceObject(),
        pods: [aPodObject("web-a")],
        admitted: () => true,
        existing: [old],
      }),
    ).rejects.toThrow("create refused");
    expect(writer.slices.has("web-old")).toBe(true);
    expect(writer.calls.filter((c) => c.startsWith("delete"))).toEqual([]);
  });

  it("applies the plan as planned: an admitted pod is ready, a drained one is listed not ready", async () => {
    const { endpoints, writer } = anEndpoints();
    const pods = [aPodObject("web-a", { ip: "10.0.0.1" }), aPodObject("web-b", { ip: "10.0.0.2" })];
    await endpoints.apply(quietLogger(), {
      service: aServiceObject(),
      pods,
      admitted: (uid) => uid === "uid-web-a",
      existing: [],
    });
    const written = [...writer.slices.values()] as unknown as EndpointSliceObject[];
    const rotation = rotationOf(written);
    expect([...rotation.ready]).toEqual(["uid-web-a"]);
    expect([...rotation.notReady]).toEqual(["uid-web-b"]);
  });

  it("calls the cache stale until it shows what was just written", async () => {
    const { endpoints, writer, slices } = anEndpoints();
    await endpoints.apply(quietLogger(), {
      service: aServiceObject(),
      pods: [aPodObject("web-a")],
      admitted: () => true,
      existing: [],
    });
    expect(endpoints.isStale(NS, "web", endpoints.current(NS, "web"))).toBe(true);
    for (const s of writer.slices.values()) slices.put(s as KubeObject);
    expect(endpoints.isStale(NS, "web", endpoints.current(NS, "web"))).toBe(false);
  });

  it("removes every slice of a Service it no longer manages, and only that Service's", async () => {
    const web = anOldSlice("web-1", []);
    const api = {
      ...anOldSlice("api-1", []),
      metadata: { ...anOldSlice("api-1", []).metadata, labels: { ...LABELS, [LABEL_SERVICE_NAME]: "api" } },
    };
    const { endpoints, writer } = anEndpoints([web, api]);
    expect(await endpoints.removeAll(quietLogger(), NS, "web", "no policy manages its Service")).toBe(1);
    expect(writer.calls).toEqual(["delete web-1"]);
    expect(
      endpoints
        .managedServices(NS)
        .map((s) => s.service)
        .sort(),
    ).toEqual(["api", "web"]);
  });
});

describe("rotationOf", () => {
  it.each([
    { name: "no slices: nothing in rotation", slices: [], ready: [], notReady: [] },
    {
      name: "ready and not-ready endpoints are told apart",
      slices: [
        anOldSlice("s", [
          { name: "a", ready: true },
          { name: "b", ready: false },
        ]),
      ],
      ready: ["uid-a"],
      notReady: ["uid-b"],
    },
  ])("$name", ({ slices, ready, notReady }) => {
    const r = rotationOf(slices);
    expect([...r.ready]).toEqual(ready);
    expect([...r.notReady]).toEqual(notReady);
  });
});
