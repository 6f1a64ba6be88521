import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  CoreV1Api,
  EventsV1Api,
  V1MicroTime,
  Watch,
  type CoreV1Event,
  type EventsV1Event,
  type KubeConfig,
} from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { Kubectl, aConfigMap, http, kubeConfigFor, statusOf, uniqueName, type Obj } from "./test-kit.js";
import { widgetCrd } from "./crd-fixture.js";
import { waitFor } from "../../test/support/wait-for.js";

let server: TestApiServer;
let kc: KubeConfig;
let core: CoreV1Api;
let events: EventsV1Api;
let kubectl: Kubectl;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  kc = kubeConfigFor(server);
  core = kc.makeApiClient(CoreV1Api);
  events = kc.makeApiClient(EventsV1Api);
  kubectl = new Kubectl(server);
});
afterAll(async () => {
  await server.stop();
  kubectl.cleanup();
});

const HOUR = 3_600_000;
const seconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

async function aNamespace(): Promise<string> {
  const name = uniqueName("ev");
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

async function aConfigMapIn(namespace: string, name = "web"): Promise<Obj> {
  return (await core.createNamespacedConfigMap({ namespace, body: aConfigMap({ name, namespace }) })) as Obj;
}

const refTo = (o: Obj): { apiVersion: string; kind: string; namespace: string; name: string; uid: string } => ({
  apiVersion: o.apiVersion ?? "v1",
  kind: o.kind ?? "ConfigMap",
  namespace: o.metadata!.namespace!,
  name: o.metadata!.name!,
  uid: o.metadata!.uid!,
});

/** An events.k8s.io Event as the operator writes it: first seen 5h ago, a series of 3 last seen 3h ago. */
function aSeriesEvent(
  namespace: string,
  regarding: ReturnType<typeof refTo>,
  overrides: Partial<EventsV1Event> = {},
): EventsV1Event {
  const now = Date.now();
  return {
    metadata: { name: uniqueName(`${regarding.name}.e`), namespace },
    eventTime: new V1MicroTime(now - 5 * HOUR),
    series: { count: 3, lastObservedTime: new V1MicroTime(now - 3 * HOUR) },
    reportingController: "healthprobe.io/operator",
    reportingInstance: "operator-0",
    action: "Drain",
    reason: "DrainCapped",
    type: "Warning",
    note: "3 of 4 endpoints would be drained; cap is 1",
    regarding,
    related: { apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy", namespace, name: "web" },
    ...overrides,
  };
}

/** A legacy core Event as the kubelet writes it: counted, first seen 6h ago, last seen 4h ago. */
function aCoreEvent(
  namespace: string,
  involvedObject: ReturnType<typeof refTo>,
  overrides: Partial<CoreV1Event> = {},
): CoreV1Event {
  const now = Date.now();
  return {
    metadata: { name: uniqueName(`${involvedObject.name}.c`), namespace },
    involvedObject,
    reason: "Pulled",
    message: "Container image already present",
    type: "Normal",
    source: { component: "kubelet", host: "node-1" },
    firstTimestamp: new Date(seconds(now - 6 * HOUR)),
    lastTimestamp: new Date(seconds(now - 4 * HOUR)),
    count: 4,
    ...overrides,
  };
}

const coreEventPath = (ns: string, name = ""): string => `/api/v1/namespaces/${ns}/events${name ? `/${name}` : ""}`;
const eventsV1Path = (ns: string, name = ""): string =>
  `/apis/events.k8s.io/v1/namespaces/${ns}/events${name ? `/${name}` : ""}`;
const names = (list: { body: { items: Obj[] } }): string[] => list.body.items.map((e) => e.metadata!.name!).sort();

describe("core v1 and events.k8s.io/v1 Events are one resource", () => {
  it("serves an events.k8s.io Event with a series through core v1, converted field by field", async () => {
    const ns = await aNamespace();
    const cm = await aConfigMapIn(ns);
    const body = aSeriesEvent(ns, refTo(cm));
    const created = await events.createNamespacedEvent({ namespace: ns, body });

    const read = await http(server, "GET", coreEventPath(ns, created.metadata!.name!));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      apiVersion: "v1",
      kind: "Event",
      metadata: {
        name: created.metadata!.name,
        namespace: ns,
        uid: created.metadata!.uid,
        resourceVersion: created.metadata!.resourceVersion,
      },
      involvedObject: refTo(cm),
      related: body.related,
      message: body.note,
      reportingComponent: "healthprobe.io/operator",
      reportingInstance: "operator-0",
      action: "Drain",
      reason: "DrainCapped",
      type: "Warning",
      eventTime: body.eventTime!.toISOString(),
      series: { count: 3, lastObservedTime: body.series!.lastObservedTime.toISOString() },
    });
    for (const field of ["regarding", "note", "reportingController", "deprecatedSource", "deprecatedCount"])
      expect(read.body).not.toHaveProperty(field);

    const typed = await core.readNamespacedEvent({ namespace: ns, name: created.metadata!.name! });
    expect(typed.involvedObject.uid).toBe(cm.metadata!.uid);
    expect(typed.series?.count).toBe(3);
    const listed = await core.listNamespacedEvent({ namespace: ns });
    expect(listed.items.map((e) => e.metadata.name)).toEqual([created.metadata!.name]);
  });

  it("serves a core v1 Event through events.k8s.io with the deprecated* fields", async () => {
    const ns = await aNamespace();
    const cm = await aConfigMapIn(ns);
    const body = aCoreEvent(ns, refTo(cm), { reportingComponent: "kubelet", reportingInstance: "node-1" });
    const created = await core.createNamespacedEvent({ namespace: ns, body });

    const read = await http(server, "GET", eventsV1Path(ns, created.metadata.name!));
    expect(read.body).toMatchObject({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion },
      regarding: refTo(cm),
      note: "Container image already present",
      reason: "Pulled",
      type: "Normal",
      reportingController: "kubelet",
      reportingInstance: "node-1",
      deprecatedSource: { component: "kubelet", host: "node-1" },
      deprecatedFirstTimestamp: body.firstTimestamp!.toISOString(),
      deprecatedLastTimestamp: body.lastTimestamp!.toISOString(),
      deprecatedCount: 4,
    });
    for (const field of ["involvedObject", "message", "source", "count", "firstTimestamp", "reportingComponent"])
      expect(read.body).not.toHaveProperty(field);
    const typed = await events.listNamespacedEvent({ namespace: ns });
    expect(typed.items.map((e) => [e.metadata?.name, e.regarding?.name, e.deprecatedCount])).toEqual([
      [created.metadata.name, "web", 4],
    ]);
  });

  it("shares names, one resourceVersion sequence and deletes between the two APIs", async () => {
    const ns = await aNamespace();
    const cm = await aConfigMapIn(ns);
    const created = await events.createNamespacedEvent({ namespace: ns, body: aSeriesEvent(ns, refTo(cm)) });
    const name = created.metadata!.name!;
    const clash = await statusOf(
      core.createNamespacedEvent({
        namespace: ns,
        body: aCoreEvent(ns, refTo(cm), { metadata: { name, namespace: ns } }),
      }),
    );
    expect(clash).toMatchObject({ code: 409, reason: "AlreadyExists" });

    // The operator's series heartbeat: a JSON patch through events.k8s.io.
    const lastObservedTime = new Date(Date.now() - HOUR).toISOString().replace(/Z$/, "000Z");
    const patched = await events.patchNamespacedEvent({
      namespace: ns,
      name,
      body: [{ op: "add", path: "/series", value: { count: 7, lastObservedTime } }],
    });
    expect(Number(patched.metadata!.resourceVersion)).toBeGreaterThan(Number(created.metadata!.resourceVersion));
    const viaCore = await http(server, "GET", coreEventPath(ns, name));
    expect(viaCore.body.series).toEqual({ count: 7, lastObservedTime });
    expect(viaCore.body.metadata.resourceVersion).toBe(patched.metadata!.resourceVersion);

    // A merge patch through core v1 (legacy validation lets it change the message) is the events.k8s.io note.
    const corePatch = await http(server, "PATCH", coreEventPath(ns, name), {
      body: { message: "cap raised to 2" },
      contentType: "application/merge-patch+json",
    });
    expect(corePatch.status).toBe(200);
    const viaEvents = await events.readNamespacedEvent({ namespace: ns, name });
    expect(viaEvents.note).toBe("cap raised to 2");
    expect(viaEvents.series?.count).toBe(7);
    expect(viaEvents.metadata?.resourceVersion).toBe(corePatch.body.metadata.resourceVersion);
    expect(viaEvents.metadata?.uid).toBe(created.metadata!.uid);

    // (events.k8s.io's stricter update rules for the same object are kube-apiserver's: not imitated here.)

    await core.deleteNamespacedEvent({ namespace: ns, name });
    expect((await http(server, "GET", eventsV1Path(ns, name))).status).toBe(404);
  });

  it("sends events.k8s.io writes to core v1 watches, in core form", async () => {
    const ns = await aNamespace();
    const cm = await aConfigMapIn(ns);
    const seen: Array<{ type: string; object: any }> = [];
    const watch = await new Watch(kc).watch(
      coreEventPath(ns),
      { resourceVersion: server.store.resourceVersion() },
      (type, object) => seen.push({ type, object }),
      () => {},
    );
    try {
      const created = await events.createNamespacedEvent({ namespace: ns, body: aSeriesEvent(ns, refTo(cm)) });
      const added = await waitFor(() => seen.find((e) => e.type === "ADDED"), {
        what: "the ADDED event on the core watch",
      });
      expect(added.object).toMatchObject({
        apiVersion: "v1",
        involvedObject: { name: "web", uid: cm.metadata!.uid },
        message: created.note,
        series: { count: 3 },
      });
      expect(added.object).not.toHaveProperty("regarding");
      await events.patchNamespacedEvent({
        namespace: ns,
        name: created.metadata!.name!,
        body: [{ op: "replace", path: "/series/count", value: 4 }],
      });
      const modified = await waitFor(() => seen.find((e) => e.type === "MODIFIED"), {
        what: "the MODIFIED event on the core watch",
      });
      expect(modified.object.series.count).toBe(4);
    } finally {
      watch.abort();
    }
  });

  it("filters events.k8s.io watches by regarding.* fields of Events written through core v1", async () => {
    const ns = await aNamespace();
    const web = await aConfigMapIn(ns, "web");
    const other = await aConfigMapIn(ns, "other");
    const seen: Array<{ type: string; object: any }> = [];
    const params = {
      resourceVersion: server.store.resourceVersion(),
      fieldSelector: "regarding.name=web,reportingController=kubelet",
    };
    const watch = await new Watch(kc).watch(
      eventsV1Path(ns),
      params,
      (type, object) => seen.push({ type, object }),
      () => {},
    );
    try {
      await core.createNamespacedEvent({
        namespace: ns,
        body: aCoreEvent(ns, refTo(other), { reportingComponent: "kubelet" }),
      });
      const wanted = await core.createNamespacedEvent({
        namespace: ns,
        body: aCoreEvent(ns, refTo(web), { reportingComponent: "kubelet" }),
      });
      const added = await waitFor(() => seen.find((e) => e.type === "ADDED"), { what: "the matching ADDED event" });
      expect(added.object).toMatchObject({
        apiVersion: "events.k8s.io/v1",
        metadata: { name: wanted.metadata.name },
        regarding: { name: "web" },
      });
      expect(seen.map((e) => e.object.metadata.name)).toEqual([wanted.metadata.name]);
    } finally {
      watch.abort();
    }
  });
});

describe("field selectors", () => {
  let ns: string;
  let web: Obj;
  let seriesName: string;
  let kubeletName: string;
  let otherName: string;
  beforeAll(async () => {
    ns = await aNamespace();
    web = await aConfigMapIn(ns, "web");
    seriesName = (await events.createNamespacedEvent({ namespace: ns, body: aSeriesEvent(ns, refTo(web)) })).metadata!
      .name!;
    kubeletName = (await core.createNamespacedEvent({ namespace: ns, body: aCoreEvent(ns, refTo(web)) })).metadata
      .name!;
    const pod = { apiVersion: "v1", kind: "Pod", namespace: ns, name: "web-1", uid: "pod-uid" };
    otherName = (
      await core.createNamespacedEvent({
        namespace: ns,
        body: aCoreEvent(ns, pod, { source: { component: "scheduler" }, reason: "Scheduled", type: "Warning" }),
      })
    ).metadata.name!;
  });

  it.each([
    ["involvedObject.kind=ConfigMap", () => [seriesName, kubeletName]],
    ["involvedObject.name=web", () => [seriesName, kubeletName]],
    ["involvedObject.namespace=NS,involvedObject.kind=Pod", () => [otherName]],
    ["involvedObject.uid=UID", () => [seriesName, kubeletName]],
    ["involvedObject.apiVersion=v1,involvedObject.name!=web", () => [otherName]],
    ["reason=DrainCapped", () => [seriesName]],
    ["type=Warning", () => [seriesName, otherName]],
    ["source=kubelet", () => [kubeletName]],
    // An events.k8s.io writer leaves source empty: the selector falls back to its reporting controller.
    ["source=healthprobe.io/operator", () => [seriesName]],
    ["metadata.name=NAME", () => [seriesName]],
  ])("core v1 %s", async (selector, expected) => {
    const fieldSelector = selector.replace("NS", ns).replace("UID", web.metadata!.uid!).replace("NAME", seriesName);
    const list = await http(server, "GET", `${coreEventPath(ns)}?fieldSelector=${encodeURIComponent(fieldSelector)}`);
    expect(list.status).toBe(200);
    expect(names(list)).toEqual(expected().sort());
  });

  it.each([
    ["regarding.kind=ConfigMap", () => [seriesName, kubeletName]],
    ["regarding.name=web-1", () => [otherName]],
    ["regarding.namespace=NS,regarding.uid=UID", () => [seriesName, kubeletName]],
    ["reason=Pulled", () => [kubeletName]],
    ["type=Normal", () => [kubeletName]],
    ["reportingController=healthprobe.io/operator", () => [seriesName]],
  ])("events.k8s.io %s", async (selector, expected) => {
    const fieldSelector = selector.replace("NS", ns).replace("UID", web.metadata!.uid!);
    const list = await http(server, "GET", `${eventsV1Path(ns)}?fieldSelector=${encodeURIComponent(fieldSelector)}`);
    expect(list.status).toBe(200);
    expect(names(list)).toEqual(expected().sort());
  });

  it("refuses the other version's field labels", async () => {
    const onCore = await http(server, "GET", `${coreEventPath(ns)}?fieldSelector=regarding.name%3Dweb`);
    expect(onCore).toMatchObject({ status: 400, body: { message: "field label not supported: regarding.name" } });
    const onEvents = await http(server, "GET", `${eventsV1Path(ns)}?fieldSelector=involvedObject.name%3Dweb`);
    expect(onEvents).toMatchObject({
      status: 400,
      body: { message: "field label not supported: involvedObject.name" },
    });
  });
});

describe("the real kubectl", () => {
  it("gets Events through both APIs with LAST SEEN, TYPE, REASON, OBJECT and MESSAGE", async () => {
    const ns = await aNamespace();
    const web = await aConfigMapIn(ns, "web");
    const seriesName = (await events.createNamespacedEvent({ namespace: ns, body: aSeriesEvent(ns, refTo(web)) }))
      .metadata!.name!;
    const pod = { apiVersion: "v1", kind: "Pod", namespace: ns, name: "web-1", uid: "pod-uid" };
    const kubeletName = (await core.createNamespacedEvent({ namespace: ns, body: aCoreEvent(ns, pod) })).metadata.name!;

    for (const resource of ["events", "events.events.k8s.io"]) {
      const out = await kubectl.run(["get", resource, "-n", ns]);
      expect(out.stderr).toBe("");
      const lines = out.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
      // The series' last observation wins over eventTime; a counted core Event shows its lastTimestamp.
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^3h\s+Warning\s+DrainCapped\s+configmap\/web\s+3 of 4 endpoints would be drained; cap is 1$/,
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(/^4h\s+Normal\s+Pulled\s+pod\/web-1\s+Container image already present$/),
      );
      expect(lines).toHaveLength(3);
    }

    const wide = await kubectl.run(["get", "events", "-n", ns, "-o", "wide"]);
    const lines = wide.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME$/,
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^3h\\s+Warning\\s+DrainCapped\\s+configmap/web\\s+healthprobe.io/operator, operator-0\\s+.*cap is 1\\s+5h\\s+3\\s+${seriesName}$`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^4h\\s+Normal\\s+Pulled\\s+pod/web-1\\s+kubelet, node-1\\s+.*present\\s+6h\\s+4\\s+${kubeletName}$`,
        ),
      ),
    );
  });

  it("describes a ConfigMap with the Events written about it through either API", async () => {
    const ns = await aNamespace();
    const web = await aConfigMapIn(ns, "web");
    const other = await aConfigMapIn(ns, "other");
    await events.createNamespacedEvent({ namespace: ns, body: aSeriesEvent(ns, refTo(web)) });
    await core.createNamespacedEvent({ namespace: ns, body: aCoreEvent(ns, refTo(web)) });
    await core.createNamespacedEvent({ namespace: ns, body: aCoreEvent(ns, refTo(other), { reason: "NotMine" }) });

    const out = await kubectl.run(["describe", "configmap", "web", "-n", ns]);
    expect(out.stderr).toBe("");
    const section = out.stdout.slice(out.stdout.indexOf("Events:"));
    expect(section).toMatch(/^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/);
    // describe counts series and legacy counts alike: last seen (xN over first seen).
    expect(section).toMatch(
      /^\s+Warning\s+DrainCapped\s+3h \(x3 over 5h\)\s+healthprobe\.io\/operator\s+3 of 4 endpoints would be drained; cap is 1$/m,
    );
    expect(section).toMatch(/^\s+Normal\s+Pulled\s+4h \(x4 over 6h\)\s+kubelet\s+Container image already present$/m);
    expect(section).not.toContain("NotMine");
  });

  it("describes a custom resource with its events.k8s.io Events, as kubectl describe hpp does", async () => {
    const crd = await http(server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      body: widgetCrd,
    });
    expect(crd.status).toBe(201);
    const ns = await aNamespace();
    const widget = await http(server, "POST", `/apis/example.com/v1/namespaces/${ns}/widgets`, {
      body: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "web" }, spec: { size: 1 } },
    });
    expect(widget.status).toBe(201);
    await events.createNamespacedEvent({
      namespace: ns,
      body: aSeriesEvent(ns, refTo(widget.body), {
        series: undefined,
        reason: "Drained",
        type: "Normal",
        note: "removed from the load balancer",
      }),
    });

    const out = await kubectl.run(["describe", "widget", "web", "-n", ns]);
    expect(out.stderr).toBe("");
    expect(out.stdout).toMatch(
      /^\s+Normal\s+Drained\s+5h\s+healthprobe\.io\/operator\s+removed from the load balancer$/m,
    );
    const table = await kubectl.run(["get", "events", "-n", ns, "--no-headers"]);
    expect(table.stdout).toMatch(/^5h\s+Normal\s+Drained\s+widget\/web\s+removed from the load balancer$/m);
  });
});
